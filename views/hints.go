package views

// What happens next after each action a lead takes, in one line beside its
// form: the Attention view's items and the session page say the same.
const (
	HintResolve          = "The agent gets the resolution and the instruction on its next brief."
	HintPlan             = "Approve: the agent may change code, told on its next brief. Ask for changes: it revises the plan with your instruction. Reject: it stops this plan and goes back to idle."
	HintAsk              = "The run resumes from where it parked, with the option you pick."
	HintPermission       = "The agent gets your answer on its next brief."
	HintClear            = "This overrides a critical control: the HARD_STOP lifts on the agent's next brief."
	HintCloseRemediation = "The agent is no longer asked to remediate from its next brief on."
	HintResume           = "The agent may continue on its next brief."
	HintPause            = "The agent is told to stop all work on its next brief."
	HintRemediation      = "The agent is told on its next brief: a required remediation is REMEDIATE until a lead closes it; an advisory one, a warning."
	HintTaskRemediation  = "The agent is told on its next brief to remediate, naming the task: REMEDIATE until a lead closes it."
)
