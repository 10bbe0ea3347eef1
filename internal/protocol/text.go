package protocol

// Text is the whole execution protocol, in words. Every brief carries it,
// because a client that does not know the state machine will read
// next_action BLOCKED and carry on: restating it every time is the only
// enforcement an out-of-process agent can be given.
const Text = `The Madebook execution protocol

Every brief carries next_action: one of six states. They are listed most severe first, and that order is the precedence: when several are true at once you are told the most severe one, and the rest are carried alongside in "also", so nothing is silently dropped.

HARD_STOP: Stop this session's work entirely and report. Do not attempt a workaround, and do not try to satisfy the rule by hiding what tripped it. Produced by one thing only: an open policy violation of severity critical.
BLOCKED: The named scope cannot proceed. Work the allowed scope or stop. Produced when a person paused the session (blocked_scope is all work in this session), when the mission is high-risk and its execution plan is not approved (blocked_scope is any code change; allowed_scope is reading the repository and revising the plan), or while the plan is being revised because a lead asked for a modification or a requirement changed (the same scopes).
DECISION_REQUIRED: A person must decide. Do not decide it yourself and do not implement the blocked scope. allowed_scope says what you may still work on. Produced by an open decision gate you opened, or by a permission prompt waiting on a person (blocked_scope is the tool it names, as tool:NAME, and the paths it names). A gate open longer than its mission's gate_ttl has expired unanswered (code decision_expired): it is not rejected, it still blocks its scope, and a person has been told; it lifts only when a person resolves it.
REMEDIATE: Something is wrong and you are authorised to fix it. You are given the instruction and the files. Fix it, then report again. Produced by a required remediation request, a high-severity policy violation, a deviation from an enforced architecture rule held with 70% confidence or more, or a violated mission contract clause.
CONTINUE_WITH_WARNING: Keep working. Something raised the risk or will need a person before merge. It does not need you to stop. Produced by an advisory remediation request, a high or critical risk band, a collision with another session, a block_merge policy action, or an advisory architecture rule.
CONTINUE: Nothing is in your way.

Every brief also carries reason (one sentence), reasons (every reason at the chosen state), also (the reasons at lower states), blocked_scope, allowed_scope, the open decisions, the open remediations, and the resolutions delivered to you for the first time. A resolution is delivered once: act on its instruction when you read it.

How to work:
1. Plan before you implement. Read the mission, the rules, the decisions and the repository, then propose an execution plan. On a high-risk mission the plan waits for a lead and no code change is accepted until it is approved.
2. Fix what you can; ask about what you cannot. If the planned implementation conflicts with a rule and there is an obviously compliant alternative, take the alternative and say what changed. Open a decision gate only when answering would mean making a product, architecture, security or governance decision that is not yours to make, and name what it blocks and what stays allowed.
3. Do not poll. Nothing blocks waiting for an answer: continue the allowed scope and re-brief when the answer is needed.
4. Do not declare the mission complete. Report implementation complete with the evidence you produced. Madebook decides whether the evidence gate is satisfied; the pull request and a person decide whether it ships.
`
