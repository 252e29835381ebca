// Package model holds the policy side of weft: the model under training or
// evaluation, seen as a Policy that turns a conversation (Request) into the
// next assistant message (Response).
//
// # Types
//
// Request, Response, Message, ToolCall, Tool, Sampling and Format are the
// shared shapes; Message and ToolCall encode to the OpenAI chat-completions
// JSON shape. Format says how the harness expects tool calls to be
// written: native function calling, Hermes <tool_call> blocks, or ReAct
// text.
//
// # Client
//
// Client is a Policy over any OpenAI-compatible chat-completions endpoint:
// vLLM, SGLang, Ollama, llama.cpp server, or OpenAI itself. NewClient takes
// a ClientConfig (BaseURL such as "http://127.0.0.1:8000/v1", Model,
// optional APIKey, per-attempt RequestTimeout, MaxRetries, InitialBackoff
// and MaxBackoff, MaxConcurrency, HTTPClient, Logger, ExtraBody for server
// options, ReturnTokenIDs for vLLM's token ids). Tools are sent only for
// FormatNative; Request.ResponseFormat asks for JSON-schema structured
// output ("response_format" {"type": "json_schema"}). The response's reasoning_content, per-token logprobs and
// vLLM's token_ids are kept in the Response.
//
// Retryable failures are retried with jittered exponential backoff, or
// after the endpoint's Retry-After; the retry loop is the Client's own, not
// openai-go's (see Client).
//
// # Errors
//
// Every Generate failure is an *Error whose Kind is one of:
//
//   - KindUnavailable: connection refused, DNS, reset (retried)
//   - KindTimeout: an attempt past RequestTimeout, or HTTP 408 (retried)
//   - KindRateLimited: HTTP 429 (retried)
//   - KindServer: HTTP 5xx (retried)
//   - KindBadRequest: any other 4xx (context length, unknown model), or a
//     Request the client cannot encode; never retried
//   - KindBadResponse: a 2xx body that is not a usable chat completion
//     (not JSON, no choices, a tool call without a name); never retried
//   - KindCanceled: the caller's ctx ended; errors.Is(err,
//     context.Canceled) or errors.Is(err, context.DeadlineExceeded) holds
//
// All of them are infrastructure failures (IsInfra): they say nothing
// about the policy, whose bad answers come back as ordinary Responses.
//
// # Offline and test stand-ins
//
// Package core/model/scripted holds the scripted offline policy that keeps
// every pipeline runnable without a model server. Package
// core/model/modeltest runs a local fake chat-completions server for
// tests of code that talks to an endpoint.
package model
