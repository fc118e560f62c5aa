package audit

import (
	"fmt"
	"strings"

	"github.com/kubectl-drift/kubectl-drift/internal/audit/auditapi"
)

// explanation is why a check exists and an example of what it finds,
// with the fix: what `audit --explain CODE` prints besides the check's
// summary and hint.
type explanation struct {
	why, example string
}

// explanationOf returns the explanation of a check; every check has one
// (TestEveryCheckIsExplained).
func explanationOf(id CheckID) (explanation, bool) {
	switch id {
	case auditapi.CheckTooBroad:
		return explanation{
			"An ignore rule is a blind spot: the engine stops comparing what it names. A rule over /spec, a pod template, a container list, a whole object, or a path on every kind hides far more than the one field that drifts, and a real change there (an image, a volume) goes unseen. The wider the field, the higher the severity.",
			"  ignoreDifferences:\n  - group: apps\n    kind: Deployment\n    jsonPointers: [/spec]          # DRIFT001: hides the whole spec\n# fix: name the field the autoscaler writes\n    jsonPointers: [/spec/replicas]",
		}, true
	case auditapi.CheckDangerousTarget:
		return explanation{
			"Some fields decide what runs and with which rights: container images, command and args, securityContext, RBAC rules, a Secret's data. Drift there is what an attacker or a bad hotfix leaves behind; ignoring it means GitOps no longer guards it. A controller-owned exception (an aggregated ClusterRole's rules, one named Secret's data) is a note, not an error.",
			"  ignoreDifferences:\n  - group: apps\n    kind: Deployment\n    jsonPointers: [/spec/template/spec/containers/0/image]   # DRIFT002\n# fix: find who changes the image (an image updater?) and make it write to Git, or allow-list the rule with a reason in .drift-audit.yaml",
		}, true
	case auditapi.CheckShadowed:
		return explanation{
			"A rule wholly inside a broader rule that applies to the same objects changes nothing: readers believe the narrow rule is the exception that matters, while the broad one hides more. Either the narrow rule is dead, or the broad one is wider than meant.",
			"  # argocd-cm: resource.customizations.ignoreDifferences.apps_Deployment: jsonPointers: [/spec]\n  ignoreDifferences:\n  - {group: apps, kind: Deployment, jsonPointers: [/spec/replicas]}   # DRIFT003: already ignored by argocd-cm's /spec\n# fix: delete the narrow rule, or narrow argocd-cm's",
		}, true
	case auditapi.CheckDuplicate:
		return explanation{
			"The engine merges rules: a second copy with the same target and paths changes nothing, and the copies drift apart when one is edited.",
			"  ignore:\n  - {paths: [/spec/replicas], target: {kind: Deployment}}\n  - {paths: [/spec/replicas], target: {kind: Deployment}}   # DRIFT004\n# fix: keep one",
		}, true
	case auditapi.CheckInvalid:
		return explanation{
			"A rule the engine cannot evaluate is skipped or fails the sync, silently in most engines: a JSON pointer with an unescaped '/' in a key, jq that does not compile, a bad glob or regex, an unknown key. The drift it was meant to hide shows up, or worse, the whole rule set is rejected.",
			"  jsonPointers: [/metadata/annotations/example.com/owner]   # DRIFT005: the key's '/' splits it\n# fix: escape '/' inside a key as ~1\n  jsonPointers: [/metadata/annotations/example.com~1owner]",
		}, true
	case auditapi.CheckMatchesNothing:
		return explanation{
			"A rule whose group, kind, name, namespace or path matches no manifest is a typo or a leftover: it hides nothing today and may hide the wrong thing tomorrow. The near miss is named (app vs apps). Rules of charts rendered outside the repository are a note: their targets cannot be checked offline.",
			"  ignoreDifferences:\n  - {group: app, kind: Deployment, jsonPointers: [/spec/replicas]}   # DRIFT006: kind Deployment is in group \"apps\"\n# fix: group: apps",
		}, true
	case auditapi.CheckSlowJQ:
		return explanation{
			"Argo CD evaluates jqPathExpressions under ignore.normalizer.jq.timeout (1s by default) and skips a rule that takes longer, without an error in the Application: the drift it should hide comes back, at random under load. The time is measured on the repository's own manifests.",
			"  jqPathExpressions: ['.. | select(type == \"object\") | .env? | .[]? | select(.name == \"X\")']   # DRIFT007: walks every node\n# fix: a direct path\n  jqPathExpressions: ['.spec.template.spec.containers[].env[]? | select(.name == \"X\")']",
		}, true
	case auditapi.CheckDriftDetectionOff:
		return explanation{
			"With drift detection or self-heal off, the engine never puts a changed object back: every field is ignored, not one. It is off unless enabled (checks: {DRIFT008: {enabled: true}}) or policy.requireSelfHeal is set, because most HelmReleases leave helm-controller's default (off) on purpose.",
			"  kind: HelmRelease\n  spec:\n    driftDetection: {mode: disabled}   # DRIFT008\n# fix: detect drift and ignore only what must drift\n    driftDetection:\n      mode: enabled\n      ignore: [{paths: [/spec/replicas], target: {kind: Deployment}}]",
		}, true
	case auditapi.CheckOverBudget:
		return explanation{
			"Each rule is reasonable alone; fifty of them mean nobody knows what Git still decides. The budget (budget: {total, perApp} in .drift-audit.yaml, or --max-rules) makes growth a decision in review.",
			"  # .drift-audit.yaml\n  budget: {total: 50, perApp: 10}\n# an Application with 12 ignoreDifferences entries: DRIFT009\n# fix: move what drifts out of Git (HPA-owned replicas, injected sidecars), or raise the budget deliberately",
		}, true
	case auditapi.CheckNoJustification:
		return explanation{
			"A reviewer cannot judge a blind spot without knowing who writes the field and why. A comment directly above the rule (or inside its entry) records it where the next reader looks; justification.pattern can require a form such as a ticket.",
			"  ignoreDifferences:\n  - {group: apps, kind: Deployment, jsonPointers: [/spec/replicas]}   # DRIFT010\n# fix:\n  # why: the HPA owns replicas\n  - {group: apps, kind: Deployment, jsonPointers: [/spec/replicas]}",
		}, true
	case auditapi.CheckAllowWithoutReason:
		return explanation{
			"The allow-list silences findings: an entry without a reason is a silenced finding nobody can review, so it suppresses nothing until it has one.",
			"  # .drift-audit.yaml\n  allow:\n  - {check: DRIFT002, file: apps/x.yaml, line: 12}   # DRIFT011\n# fix:\n  - {check: DRIFT002, file: apps/x.yaml, line: 12, reason: \"image set by the release pipeline, TICKET-42\"}",
		}, true
	case auditapi.CheckUnparsableFile:
		return explanation{
			"A manifest that does not parse hides its rules from the audit and fails the engine's build; a document without apiVersion, kind and metadata is no object the engine applies. Files that hold no Kubernetes object (values, templates, kustomization.yaml) are skipped, not reported.",
			"  apiVersion: argoproj.io/v1alpha1\n  kind: Application\n  spec:\n    ignoreDifferences:\n    - group: apps\n     kind: Deployment      # DRIFT012: bad indentation\n# fix the syntax, or leave the file out (.driftauditignore, --exclude)",
		}, true
	case auditapi.CheckRemovedRule:
		return explanation{
			"Under --base, a rule the change removes or narrows means more drift is seen: reported as a note so that the review shows the good news too. It never fails a run.",
			"  # base: jsonPointers: [/spec]; change: jsonPointers: [/spec/replicas]\n  # DRIFT013 (note): the rule is narrowed\n# nothing to do",
		}, true
	}
	return explanation{}, false
}

// Explain is what `audit --explain CODE` prints for the check with ID or
// name idOrName: its summary, severity, why it exists, an example and the
// fix.
func Explain(idOrName string) (string, error) {
	c, ok := lookupCheck(idOrName)
	if !ok {
		var ids []string
		for _, c := range Checks() {
			ids = append(ids, string(c.ID))
		}
		return "", fmt.Errorf("unknown check %q: one of %s (or its name)", idOrName, strings.Join(ids, ", "))
	}
	e, _ := explanationOf(c.ID)
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s (%s", c.ID, c.Name, c.Severity)
	if c.OptIn {
		b.WriteString(", off unless enabled")
	}
	fmt.Fprintf(&b, ")\n  %s\n\nWhy:\n%s\n\nExample:\n%s\n\nFix:\n  %s\n", c.Summary, wrap(e.why, 76, "  "), e.example, c.Hint)
	return b.String(), nil
}

// wrap fills text into lines of at most width characters, each indented.
func wrap(text string, width int, indent string) string {
	var lines []string
	line := indent
	for _, w := range strings.Fields(text) {
		if len(line)+len(w)+1 > width && strings.TrimSpace(line) != "" {
			lines = append(lines, line)
			line = indent
		}
		if strings.TrimSpace(line) != "" {
			line += " "
		}
		line += w
	}
	return strings.Join(append(lines, line), "\n")
}
