// Package loop is the episode loop shared by the built-in harnesses. A
// harness supplies a Protocol (system prompt, tools offered, response
// parsing, how results go back to the model) and Run drives the episode:
// ListTools, the user's opening message, then one model generation per
// turn, the parsed tool calls run through Env, messages to the user
// through User, until the user is done or a limit is hit. Run records the
// canonical messages and every turn in the response's Trajectory. With a
// RunEpisodeRequest.History, Run resumes the conversation: it checks the
// history (CheckHistory), puts it after the system message, renders it
// into the prompt with the Protocol's Render and Observe, and gives it to
// the first User.Next.
package loop
