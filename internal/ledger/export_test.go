package ledger

// ToolCallFrom is toolCallFrom, for the corrupt-row test: no use case
// reads a tool call back after recording it (the audit does).
var ToolCallFrom = toolCallFrom

// TriggerError is triggerError, for the test of the triggers' answers.
var TriggerError = triggerError

// WaitToolRefreshes waits for the tool memo's background reads under way.
func (s *Service) WaitToolRefreshes() { s.tools.refreshes.Wait() }
