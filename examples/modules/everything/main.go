package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/weft-dev/weft/sdk/tool"
)

// Fixture media: a 1x1 red PNG and a 1 ms silent WAV (8 kHz, mono, 16-bit).
var (
	redPixelPNG = mustBase64("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR42mP4z8AAAAMBAQD3A0FDAAAAAElFTkSuQmCC")
	silentWAV   = mustBase64("UklGRjQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YRAAAAAAAAAAAAAAAAAAAAAAAAAA")
)

func mustBase64(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// jsonSchema202012 is the input schema the conformance suite's
// json-schema-2020-12 scenario looks for: "$schema", "$defs" and
// "additionalProperties" must reach tools/list unchanged.
const jsonSchema202012 = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "$defs": {
    "address": {
      "type": "object",
      "properties": {
        "street": {"type": "string"},
        "city": {"type": "string"}
      }
    }
  },
  "properties": {
    "name": {"type": "string"},
    "address": {"$ref": "#/$defs/address"}
  },
  "additionalProperties": false
}`

func init() {
	tool.Module(tool.Info{
		Name:        "everything",
		Version:     "1.0.0",
		Description: "The server fixtures of the MCP conformance suite: every content type, logging, progress, errors, resources, templates and prompts.",
	})

	tool.Register("test_simple_text", "Tests simple text content response", simpleText, tool.ReadOnly())
	tool.Register("test_image_content", "Tests image content response", imageContent, tool.ReadOnly())
	tool.Register("test_audio_content", "Tests audio content response", audioContent, tool.ReadOnly())
	tool.Register("test_embedded_resource", "Tests embedded resource content response", embeddedResource, tool.ReadOnly())
	tool.Register("test_multiple_content_types", "Tests response with multiple content types (text, image, resource)", multipleContent, tool.ReadOnly())
	tool.Register("test_tool_with_logging", "Tests tool that emits log messages during execution", withLogging, tool.ReadOnly())
	tool.Register("test_tool_with_progress", "Tests tool that reports progress notifications", withProgress, tool.ReadOnly())
	tool.Register("test_error_handling", "Tests error response handling", errorHandling, tool.ReadOnly())
	tool.Register("test_reconnection", "Tests SSE stream disconnection and client reconnection (SEP-1699); the stream handling is the MCP host's, the module only answers", reconnection, tool.ReadOnly())
	tool.Register("json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features", jsonSchemaTool, tool.ReadOnly(), tool.InputSchema(jsonSchema202012))

	tool.Resource(tool.ResourceInfo{
		URI: "test://static-text", Name: "static-text", Title: "Static Text Resource",
		Description: "A static text resource for testing", MimeType: "text/plain",
	}, staticText)
	tool.Resource(tool.ResourceInfo{
		URI: "test://static-binary", Name: "static-binary", Title: "Static Binary Resource",
		Description: "A static binary resource (a 1x1 red PNG) for testing", MimeType: "image/png",
	}, staticBinary)
	tool.ResourceTemplate(tool.TemplateInfo{
		URITemplate: "test://template/{id}/data", Name: "template", Title: "Resource Template",
		Description: "A resource template with parameter substitution", MimeType: "application/json",
	}, templateData)

	tool.Prompt(tool.PromptInfo{Name: "test_simple_prompt", Title: "Simple Test Prompt", Description: "A simple prompt without arguments"}, simplePrompt)
	tool.Prompt(tool.PromptInfo{
		Name: "test_prompt_with_arguments", Title: "Prompt With Arguments", Description: "A prompt with required arguments",
		Arguments: []tool.PromptArgument{
			{Name: "arg1", Description: "First test argument", Required: true},
			{Name: "arg2", Description: "Second test argument", Required: true},
		},
	}, promptWithArguments)
	tool.Prompt(tool.PromptInfo{
		Name: "test_prompt_with_embedded_resource", Title: "Prompt With Embedded Resource", Description: "A prompt that includes an embedded resource",
		Arguments: []tool.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}},
	}, promptWithEmbeddedResource)
	tool.Prompt(tool.PromptInfo{Name: "test_prompt_with_image", Title: "Prompt With Image", Description: "A prompt that includes image content"}, promptWithImage)
}

func main() {}

// ----- tools -----

func simpleText(context.Context, struct{}) (string, error) {
	return "This is a simple text response for testing.", nil
}

func imageContent(context.Context, struct{}) (tool.Result, error) {
	return tool.Result{Content: []tool.Content{tool.Image(redPixelPNG, "image/png")}}, nil
}

func audioContent(context.Context, struct{}) (tool.Result, error) {
	return tool.Result{Content: []tool.Content{tool.Audio(silentWAV, "audio/wav")}}, nil
}

func embeddedResource(context.Context, struct{}) (tool.Result, error) {
	return tool.Result{Content: []tool.Content{tool.Embedded(tool.ResourceContents{
		URI: "test://embedded-resource", MimeType: "text/plain", Text: "This is an embedded resource content.",
	})}}, nil
}

func multipleContent(context.Context, struct{}) (tool.Result, error) {
	return tool.Result{Content: []tool.Content{
		tool.Text("Multiple content types test:"),
		tool.Image(redPixelPNG, "image/png"),
		tool.Embedded(tool.ResourceContents{
			URI: "test://mixed-content-resource", MimeType: "application/json", Text: `{"test":"data","value":123}`,
		}),
	}}, nil
}

// withLogging sends the three info-level log messages the suite counts.
// The reference server waits ~50 ms between them; a weft module has no wall
// clock to wait on, and the suite only needs the three notifications.
func withLogging(context.Context, struct{}) (string, error) {
	tool.Log(1, "Tool execution started")
	tool.Log(1, "Tool processing data")
	tool.Log(1, "Tool execution completed")
	return "Tool with logging executed successfully", nil
}

// withProgress reports 0, 50 and 100 of 100. The host sends them as
// notifications/progress when the request carried a progress token.
func withProgress(context.Context, struct{}) (string, error) {
	for _, p := range []float64{0, 50, 100} {
		tool.Progress(p, 100, fmt.Sprintf("Completed step %g of 100", p))
	}
	return "Tool with progress executed successfully", nil
}

func errorHandling(context.Context, struct{}) (string, error) {
	return "", tool.Errorf("This tool intentionally returns an error for testing")
}

func reconnection(context.Context, struct{}) (string, error) {
	return "Reconnection test completed successfully", nil
}

type address struct {
	Street *string `json:"street,omitempty"`
	City   *string `json:"city,omitempty"`
}

type jsonSchemaIn struct {
	Name    *string  `json:"name,omitempty"`
	Address *address `json:"address,omitempty"`
}

func jsonSchemaTool(_ context.Context, in jsonSchemaIn) (string, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(in); err != nil {
		return "", err
	}
	return "JSON Schema 2020-12 tool called with: " + strings.TrimSuffix(b.String(), "\n"), nil
}

// ----- resources -----

func staticText(context.Context, string) ([]tool.ResourceContents, error) {
	return []tool.ResourceContents{{Text: "This is the content of the static text resource."}}, nil
}

func staticBinary(context.Context, string) ([]tool.ResourceContents, error) {
	return []tool.ResourceContents{{Blob: redPixelPNG}}, nil
}

func templateData(_ context.Context, uri string, vars map[string]string) ([]tool.ResourceContents, error) {
	id := vars["id"]
	b, err := json.Marshal(struct {
		ID           string `json:"id"`
		TemplateTest bool   `json:"templateTest"`
		Data         string `json:"data"`
	}{id, true, "Data for ID: " + id})
	if err != nil {
		return nil, err
	}
	return []tool.ResourceContents{{URI: uri, Text: string(b)}}, nil
}

// ----- prompts -----

func user(c tool.Content) tool.PromptMessage { return tool.PromptMessage{Role: "user", Content: c} }

func simplePrompt(context.Context, map[string]string) ([]tool.PromptMessage, error) {
	return []tool.PromptMessage{user(tool.Text("This is a simple prompt for testing."))}, nil
}

func promptWithArguments(_ context.Context, args map[string]string) ([]tool.PromptMessage, error) {
	return []tool.PromptMessage{user(tool.Text(fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", args["arg1"], args["arg2"])))}, nil
}

func promptWithEmbeddedResource(_ context.Context, args map[string]string) ([]tool.PromptMessage, error) {
	if args["resourceUri"] == "" {
		return nil, tool.Errorf("resourceUri is empty")
	}
	return []tool.PromptMessage{
		user(tool.Embedded(tool.ResourceContents{URI: args["resourceUri"], MimeType: "text/plain", Text: "Embedded resource content for testing."})),
		user(tool.Text("Please process the embedded resource above.")),
	}, nil
}

func promptWithImage(context.Context, map[string]string) ([]tool.PromptMessage, error) {
	return []tool.PromptMessage{
		user(tool.Image(redPixelPNG, "image/png")),
		user(tool.Text("Please analyze the image above.")),
	}, nil
}
