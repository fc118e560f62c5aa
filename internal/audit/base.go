package audit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kubectl-drift/kubectl-drift/internal/audit/auditapi"
	"github.com/kubectl-drift/kubectl-drift/internal/source"
)

// GitTopLevel returns the top-level directory of the Git checkout holding
// dir, or an error when dir is not in one (or git is missing).
func GitTopLevel(ctx context.Context, dir string) (string, error) {
	out, err := source.Git(ctx, dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", err
	}
	return filepath.Clean(out), nil
}

// exportTree writes the tree of ref into dir, read-only on the repository
// (source.ExportTree); ref must name a commit.
func exportTree(ctx context.Context, repo, ref, dir string) error {
	if _, err := source.Git(ctx, repo, "rev-parse", "--verify", "--quiet", ref+"^{commit}"); err != nil {
		return fmt.Errorf("not a commit in %s", repo)
	}
	return source.ExportTree(ctx, repo, ref, dir)
}

// RunBase audits only what the working tree adds or widens relative to the
// Git revision ref: findings about rules that are new or broader than in
// ref, and file or policy findings that ref did not have. Rules that the
// change removes or narrows are reported as notes (good news).
func RunBase(ctx context.Context, opts Options, ref string) (*Result, error) {
	cfg, rel, err := opts.prepare()
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "drift-audit-base-")
	if err != nil {
		return nil, err
	}
	// Best effort: a temp directory left behind does not change the audit.
	defer func() { _ = os.RemoveAll(tmp) }()
	if err := exportTree(ctx, opts.Root, ref, tmp); err != nil {
		// A tar or file error alone would not say it was --base's tree.
		return nil, fmt.Errorf("--base %s: %w", ref, err)
	}
	head, err := collect(opts, opts.Root, rel, false)
	if err != nil {
		return nil, err
	}
	base, err := collect(opts, tmp, rel, true)
	if err != nil {
		return nil, err
	}
	headF := analyze(head, cfg, opts.MaxRules)
	baseF := analyze(base, cfg, opts.MaxRules)

	headRules := prepareAll(head)
	baseRules := prepareAll(base)
	changes := map[string]Change{}
	for _, r := range headRules {
		if c := changeOf(r, baseRules); c != "" {
			changes[r.key] = c
		}
	}
	baseKeys := map[string]int{}
	for _, f := range baseF {
		baseKeys[nonRuleKey(f)] = max(baseKeys[nonRuleKey(f)], f.count+1)
	}
	var kept []Finding
	for _, f := range headF {
		if f.ruleKey != "" {
			c, ok := changes[f.ruleKey]
			if !ok {
				continue
			}
			f.Change = c
			kept = append(kept, f)
			continue
		}
		if n, ok := baseKeys[nonRuleKey(f)]; ok && f.count+1 <= n {
			continue
		}
		kept = append(kept, f)
	}
	kept = append(kept, removedRules(baseRules, headRules)...)
	res := &Result{Files: head.files, Manifests: len(head.docs), Rules: len(head.rules), Base: ref}
	res.Findings, res.Suppressed = applyConfig(kept, cfg, opts.Root)
	res.Findings = mergeRepeats(res.Findings)
	return res, nil
}

func prepareAll(s *snapshot) []*ruleInfo {
	out := make([]*ruleInfo, 0, len(s.rules))
	for _, r := range s.rules {
		out = append(out, prepareRule(r, s.engines))
	}
	return out
}

// nonRuleKey identifies a finding that is not about one rule across two
// revisions: by what it says and where, not by line. Budget findings are
// keyed by their scope only; their count decides.
func nonRuleKey(f Finding) string {
	if f.Check == auditapi.CheckOverBudget {
		if strings.Contains(f.Message, "in total") {
			return string(f.Check) + "|total"
		}
		return string(f.Check) + "|" + f.Object
	}
	return fmt.Sprintf("%s|%s|%s|%s", f.Check, f.File, f.Object, f.Message)
}

// changeOf says whether head rule r is new (added), broader than before
// (widened) or unchanged/narrower (""), relative to the base rules.
func changeOf(r *ruleInfo, base []*ruleInfo) Change {
	sameField := false
	for _, b := range base {
		if b.key == r.key {
			return ""
		}
		if b.Engine != r.Engine || b.Type != r.Type || b.Origin.Object != r.Origin.Object {
			continue
		}
		if b.problem == "" && r.problem == "" && b.m.match != nil && covers(b, r) {
			return ""
		}
		if b.Origin.Field == r.Origin.Field {
			sameField = true
		}
	}
	if sameField {
		return ChangeWidened
	}
	return ChangeAdded
}

// removedRules reports base ignore rules that no head rule of the same
// object still covers.
func removedRules(base, head []*ruleInfo) []Finding {
	var out []Finding
	for _, b := range base {
		if !b.isIgnoreRule() {
			continue
		}
		kept, narrowed := false, false
		for _, h := range head {
			if h.key == b.key {
				kept = true
				break
			}
			if h.Engine != b.Engine || h.Type != b.Type || h.Origin.Object != b.Origin.Object {
				continue
			}
			if h.problem == "" && b.problem == "" && h.m.match != nil && covers(h, b) {
				kept = true
				break
			}
			if h.Origin.Field == b.Origin.Field {
				narrowed = true
			}
		}
		if kept {
			continue
		}
		verb := "removes"
		if narrowed {
			verb = "narrows"
		}
		what := strings.Join(append(append(append([]string(nil), b.JSONPointers...), b.JQPathExpressions...), b.Managers...), ", ")
		if b.WholeResource || what == "" {
			what = "the whole object"
		}
		f := newFinding(auditapi.CheckRemovedRule, fmt.Sprintf("the change %s the rule ignoring %s on %s (was at line %d)", verb, what, b.Target.Describe(), b.Origin.Line))
		f = f.atOrigin(b.Origin)
		// The line is the base revision's; in the changed file it may hold
		// anything, so only the file is kept as the location.
		f.Line, f.Column = 0, 0
		f.Engine = b.Engine
		f.Change = ChangeRemoved
		out = append(out, f)
	}
	return out
}
