package ledger

// ToolCallFrom is toolCallFrom, for the corrupt-row test: no use case
// reads a tool call back after recording it (the audit does).
var ToolCallFrom = toolCallFrom

// TriggerError is triggerError, for the test of the triggers' answers.
var TriggerError = triggerError
