package argocd

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-drift/kubectl-drift/internal/model"
	"github.com/kubectl-drift/kubectl-drift/internal/model/jsonpointer"

	"github.com/kubectl-drift/kubectl-drift/internal/jq"
)

// argocd-cm and argocd-cmd-params-cm keys (util/settings/settings.go).
const (
	keyCustomizations    = "resource.customizations"
	keyCompareOptions    = "resource.compareoptions"
	keyExclusions        = "resource.exclusions"
	keyInclusions        = "resource.inclusions"
	keyTrackingMethod    = "application.resourceTrackingMethod"
	keyInstanceLabelKey  = "application.instanceLabelKey"
	keyJQTimeout         = "ignore.normalizer.jq.timeout"
	wildcardOverrideKey  = "*/*"
	crdOverrideKey       = "apiextensions.k8s.io/CustomResourceDefinition"
	cmName               = "argocd-cm"
	cmdParamsName        = "argocd-cmd-params-cm"
	statusPointer        = "/status"
	customizationIgnore  = "ignoreDifferences"
	customizationUpdates = "ignoreResourceUpdates"
	customizationKnown   = "knownTypeFields"
)

// posFunc returns the 1-based line and column of a JSON pointer inside the
// document a setting was read from, or 0, 0.
type posFunc func(pointer string) (line, col int)

// cmSource says where an argocd-cm was read from.
type cmSource struct {
	Object string // "ConfigMap argocd/argocd-cm"
	File   string
	Pos    posFunc
	// Prefix is where an Application spec sits inside the object: "" for an
	// Application, "/spec/template" for an ApplicationSet.
	Prefix string
	// Fields, for an argocd-cm synthesized from another shape (ArgoCD
	// resource, chart values), names the field each data key came from.
	Fields map[string]string
}

func (s cmSource) origin(field, pointer string) model.Origin {
	o := model.Origin{Object: s.Object, Field: field, File: s.File}
	if s.Pos != nil && s.File != "" {
		o.Line, o.Column = s.Pos(pointer)
	}
	return o
}

// Settings is argocd-cm (plus argocd-cmd-params-cm) as the application
// controller reads it.
type Settings struct {
	// Overrides are keyed like Argo's resourceOverrides map: "group/Kind",
	// a bare "Kind" for kind-only keys, "*/*" for .all.
	Overrides map[string]ResourceOverride
	// Rules are the ignore rules of argocd-cm, one per key and mechanism,
	// with their origins (compare options' /status rule included).
	Rules []*ignoreRule
	// Known are knownTypeFields entries.
	Known []knownField
	// Compare is resource.compareoptions with defaults applied.
	Compare CompareOptions
	// TrackingMethod and InstanceLabelKey with defaults applied.
	TrackingMethod   string
	InstanceLabelKey string
	// Exclusions/Inclusions are resource.exclusions/inclusions.
	Exclusions []filterRule
	Inclusions []filterRule
	// JQTimeout is ignore.normalizer.jq.timeout (default 1s).
	JQTimeout time.Duration
	// ServerSideDiff is controller.diff.server.side: server-side diff for
	// every Application (each may opt out with ServerSideDiff=false).
	ServerSideDiff bool
	// Fatal is set when Argo CD itself could not load its resource
	// overrides (GetResourceOverrides fails): every Application then shows a
	// ComparisonError and nothing is diffed.
	Fatal error
	// Problems are per-key errors and warnings, each with its origin.
	Problems []model.Note
	// Source says where argocd-cm came from (empty when defaulted).
	Source cmSource
	// compareOptionsSet: resource.compareoptions is written in argocd-cm.
	compareOptionsSet bool
}

type filterRule struct {
	FilteredResource
	Origin model.Origin
}

type knownField struct {
	Group, Kind string
	Field       string
	Type        string
	Origin      model.Origin
}

// DefaultSettings is an Argo CD 3.x install with an empty argocd-cm.
func DefaultSettings() *Settings {
	s := emptySettings()
	s.addStatusRule()
	return s
}

// emptySettings are Argo CD's defaults before argocd-cm is read.
func emptySettings() *Settings {
	return &Settings{
		Overrides:        map[string]ResourceOverride{},
		Compare:          DefaultCompareOptions(),
		TrackingMethod:   TrackingAnnotation,
		InstanceLabelKey: DefaultInstanceLabelKey,
		JQTimeout:        jq.DefaultTimeout,
	}
}

// ParseSettings reads argocd-cm data the way util/settings/settings.go does
// (GetResourceOverrides, appendResourceOverridesFromSplitKeys,
// convertToOverrideKey, GetResourceCompareOptions, GetResourcesFilter,
// GetTrackingMethod, GetAppInstanceLabelKey). It never fails: problems become
// notes, and problems that make Argo CD itself fail set Fatal.
func ParseSettings(data map[string]string, src cmSource) *Settings {
	s := emptySettings()
	s.Source = src
	if src.Object == "" {
		s.Source.Object = "ConfigMap " + DefaultNamespace + "/" + cmName
	}
	p := &settingsParser{s: s, data: data, fields: src.Fields, origins: map[originKey]string{}}
	p.legacyCustomizations()
	p.splitCustomizations()
	p.compareOptions()
	p.overrideRules()
	// Status: settings.go GetResourceOverrides adds /status to */* (all,
	// the v3 default, and any unknown value) or to the CRD kind only (crd).
	if s.Fatal == nil {
		s.addStatusRule()
	}
	for _, r := range s.Rules {
		r.compile()
	}
	p.resourceFilters()
	if v := data[keyTrackingMethod]; v != "" {
		s.TrackingMethod = v
	}
	if v := data[keyInstanceLabelKey]; v != "" {
		s.InstanceLabelKey = v
	}
	return s
}

// originKey names the argocd-cm key an override of one customization type
// came from, for rule origins.
type originKey struct{ key, typ string }

// settingsParser holds the steps of ParseSettings: the settings being
// built, argocd-cm's data, and where each override came from.
type settingsParser struct {
	s    *Settings
	data map[string]string
	// fields maps a data key to the field its origin names (settings
	// rendered from another object); default data[KEY].
	fields  map[string]string
	origins map[originKey]string
}

func (p *settingsParser) field(k string) string {
	if f := p.fields[k]; f != "" {
		return f
	}
	return "data[" + k + "]"
}

func (p *settingsParser) ptr(k string) string { return "/data/" + jsonpointer.Escape(k) }

func (p *settingsParser) problem(level model.NoteLevel, k, reason, msg string) {
	o := p.s.Source.origin(p.field(k), p.ptr(k))
	p.s.Problems = append(p.s.Problems, model.Note{Engine: Engine, Level: level, Rule: &o, Reason: reason, Message: msg})
}

// fatal is a problem that makes Argo CD's GetResourceOverrides fail.
func (p *settingsParser) fatal(k, reason string, err error) {
	p.problem(model.NoteError, k, reason, err.Error())
	if p.s.Fatal == nil {
		p.s.Fatal = fmt.Errorf("argocd-cm %s: %w (Argo CD cannot load its resource overrides: every Application shows a ComparisonError)", k, err)
	}
}

// legacyCustomizations reads the single-key form: resource.customizations
// holds a YAML map of "group/Kind" to overrides.
func (p *settingsParser) legacyCustomizations() {
	v, ok := p.data[keyCustomizations]
	if !ok || v == "" {
		return
	}
	m, err := parseLegacyCustomizations(v)
	if err != nil {
		p.fatal(keyCustomizations, "invalid-yaml", starHint(v, err))
		return
	}
	for k, o := range m {
		p.s.Overrides[k] = o
		p.origins[originKey{k, customizationIgnore}] = keyCustomizations
		p.origins[originKey{k, customizationUpdates}] = keyCustomizations
		p.origins[originKey{k, customizationKnown}] = keyCustomizations
	}
}

// splitCustomizations reads the split keys
// resource.customizations.<type>.<group_kind>; they win over the
// single-key form for the same type.
func (p *settingsParser) splitCustomizations() {
	for _, k := range slices.Sorted(maps.Keys(p.data)) {
		if !strings.HasPrefix(k, keyCustomizations) {
			continue
		}
		parts := strings.SplitN(k, ".", 4)
		if len(parts) < 4 {
			if k != keyCustomizations {
				p.problem(model.NoteWarning, k, "unknown-key", fmt.Sprintf("key %q is ignored by Argo CD: expected resource.customizations.<type>.<group_kind>", k))
			}
			continue
		}
		okey, err := convertToOverrideKey(parts[3])
		if err != nil {
			p.fatal(k, "invalid-key", err)
			continue
		}
		if okey == "all" {
			okey = wildcardOverrideKey
		}
		ov := p.s.Overrides[okey]
		if p.customization(k, parts[2], okey, &ov) {
			p.s.Overrides[okey] = ov
		}
	}
}

// customization reads one split key of type typ into ov; false when it
// holds nothing for the overrides (or is invalid).
func (p *settingsParser) customization(k, typ, okey string, ov *ResourceOverride) bool {
	v := p.data[k]
	switch typ {
	case "health", "actions":
		// Health and actions scripts do not affect diffing.
	case "useOpenLibs":
		if _, err := strconv.ParseBool(v); err != nil {
			p.fatal(k, "invalid-value", err)
			return false
		}
	case customizationIgnore, customizationUpdates:
		var d OverrideIgnoreDiff
		if err := yaml.Unmarshal([]byte(v), &d); err != nil {
			p.fatal(k, "invalid-yaml", starHint(v, err))
			return false
		}
		if typ == customizationIgnore {
			ov.IgnoreDifferences = d
		} else {
			ov.IgnoreResourceUpdates = d
		}
		p.origins[originKey{okey, typ}] = k
	case customizationKnown:
		var f []KnownTypeField
		if err := yaml.Unmarshal([]byte(v), &f); err != nil {
			p.fatal(k, "invalid-yaml", starHint(v, err))
			return false
		}
		ov.KnownTypeFields = f
		p.origins[originKey{okey, customizationKnown}] = k
	default:
		p.fatal(k, "unknown-key", fmt.Errorf("resource customization type %s not supported", typ))
		return false
	}
	return true
}

// compareOptions reads resource.compareoptions. A parse error makes
// GetResourceOverrides fail.
func (p *settingsParser) compareOptions() {
	v, ok := p.data[keyCompareOptions]
	if !ok {
		return
	}
	p.s.compareOptionsSet = true
	co := DefaultCompareOptions()
	if err := yaml.Unmarshal([]byte(v), &co); err != nil {
		p.fatal(keyCompareOptions, "invalid-yaml", err)
		return
	}
	p.s.Compare = co
}

// overrideRules turns the overrides into rules, in a stable order
// (override keys sorted), each with the key it came from.
func (p *settingsParser) overrideRules() {
	s := p.s
	for _, okey := range slices.Sorted(maps.Keys(s.Overrides)) {
		ov := s.Overrides[okey]
		group, kind, kerr := groupKindForOverrideKey(okey)
		fieldFor := func(typ string) (string, string) {
			k := p.origins[originKey{okey, typ}]
			if k == "" || k == keyCustomizations {
				return p.field(keyCustomizations) + "[" + okey + "]." + typ, p.ptr(keyCustomizations)
			}
			return p.field(k), p.ptr(k)
		}
		if d := ov.IgnoreDifferences; len(d.JSONPointers)+len(d.JQPathExpressions)+len(d.ManagedFieldsManagers) > 0 {
			f, ptr := fieldFor(customizationIgnore)
			r := &ignoreRule{
				Origin: s.Source.origin(f, ptr), FromCM: true, OverrideKey: okey,
				Group: group, Kind: kind,
				JSONPointers: d.JSONPointers, JQPathExpressions: d.JQPathExpressions, Managers: d.ManagedFieldsManagers,
				Scope: model.ScopeDiff,
			}
			if kerr != nil {
				r.Errors = append(r.Errors, kerr.Error())
			}
			s.Rules = append(s.Rules, r)
		}
		if d := ov.IgnoreResourceUpdates; len(d.JSONPointers)+len(d.JQPathExpressions)+len(d.ManagedFieldsManagers) > 0 {
			f, ptr := fieldFor(customizationUpdates)
			s.Rules = append(s.Rules, &ignoreRule{
				Origin: s.Source.origin(f, ptr), FromCM: true, OverrideKey: okey,
				Group: group, Kind: kind,
				JSONPointers: d.JSONPointers, JQPathExpressions: d.JQPathExpressions, Managers: d.ManagedFieldsManagers,
				Scope: model.ScopeRefresh,
			})
		}
		for i, kf := range ov.KnownTypeFields {
			f, ptr := fieldFor(customizationKnown)
			s.Known = append(s.Known, knownField{Group: group, Kind: kind, Field: kf.Field, Type: kf.Type,
				Origin: s.Source.origin(fmt.Sprintf("%s[%d]", f, i), ptr)})
		}
	}
}

// resourceFilters reads resource.exclusions and resource.inclusions.
func (p *settingsParser) resourceFilters() {
	for _, fk := range []struct {
		key string
		dst *[]filterRule
	}{{keyExclusions, &p.s.Exclusions}, {keyInclusions, &p.s.Inclusions}} {
		v, ok := p.data[fk.key]
		if !ok {
			continue
		}
		var list []FilteredResource
		if err := yaml.Unmarshal([]byte(v), &list); err != nil {
			p.problem(model.NoteError, fk.key, "invalid-yaml", starHint(v, err).Error())
			continue
		}
		for i, fr := range list {
			o := p.s.Source.origin(fmt.Sprintf("%s[%d]", p.field(fk.key), i), p.ptr(fk.key))
			for _, g := range append(append([]string{}, fr.APIGroups...), fr.Clusters...) {
				if _, err := compileGlob(g); err != nil {
					p.problem(model.NoteError, fk.key, "invalid-glob", fmt.Sprintf("%s[%d]: invalid glob %q: %v (Argo CD never matches it)", fk.key, i, g, err))
				}
			}
			*fk.dst = append(*fk.dst, filterRule{FilteredResource: fr, Origin: o})
		}
	}
}

// BuiltinDefaultOrigin is the origin of settings that no argocd-cm gave:
// Argo CD's own defaults (util/settings/settings.go GetResourceCompareOptions).
const BuiltinDefaultOrigin = "Argo CD default (no argocd-cm read)"

// addStatusRule mirrors addStatusOverrideToGK in GetResourceOverrides.
func (s *Settings) addStatusRule() {
	key := ""
	switch s.Compare.IgnoreResourceStatusField {
	case "", "all":
		key = wildcardOverrideKey
	case "crd":
		key = crdOverrideKey
	case "none", "off", "false":
		return
	default:
		key = wildcardOverrideKey
	}
	ov := s.Overrides[key]
	ov.IgnoreDifferences.JSONPointers = append(ov.IgnoreDifferences.JSONPointers, statusPointer)
	s.Overrides[key] = ov
	group, kind, _ := groupKindForOverrideKey(key)
	value := s.Compare.IgnoreResourceStatusField
	if value == "" {
		value = "all"
	}
	o := s.Source.origin("data["+keyCompareOptions+"].ignoreResourceStatusField="+value, "/data/"+keyCompareOptions)
	switch {
	case o.Object == "":
		// No argocd-cm was read (absent, Forbidden, unreachable or
		// offline): this is Argo CD's built-in default, not a setting
		// anybody wrote; say so rather than cite a ConfigMap.
		o.Object = BuiltinDefaultOrigin
		o.Field = "resource.compareoptions ignoreResourceStatusField=all"
	case !s.compareOptionsSet:
		o.Field = "data[" + keyCompareOptions + "].ignoreResourceStatusField (default all)"
	}
	s.Rules = append(s.Rules, &ignoreRule{
		Origin: o, FromCM: true, OverrideKey: key, Group: group, Kind: kind,
		JSONPointers: []string{statusPointer}, Scope: model.ScopeDiff, Type: RuleCompareOptions,
	})
}

// ParseCmdParams reads argocd-cmd-params-cm: the jq timeout and the
// server-side diff switch.
func (s *Settings) ParseCmdParams(data map[string]string, src cmSource) {
	if v := data["controller.diff.server.side"]; v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			o := src.origin("data[controller.diff.server.side]", "/data/controller.diff.server.side")
			s.Problems = append(s.Problems, model.Note{Engine: Engine, Level: model.NoteError, Rule: &o, Reason: "invalid-value",
				Message: fmt.Sprintf("invalid controller.diff.server.side %q: the controller fails to start", v)})
		}
		s.ServerSideDiff = b
	}
	v, ok := data[keyJQTimeout]
	if !ok || v == "" {
		return
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		o := src.origin("data["+keyJQTimeout+"]", "/data/"+jsonpointer.Escape(keyJQTimeout))
		msg := fmt.Sprintf("invalid %s %q: using the default %s", keyJQTimeout, v, jq.DefaultTimeout)
		s.Problems = append(s.Problems, model.Note{Engine: Engine, Level: model.NoteError, Rule: &o, Reason: "invalid-value", Message: msg})
		return
	}
	s.JQTimeout = d
}

// convertToOverrideKey mirrors settings.go: "group_Kind" becomes
// "group/Kind", a bare "Kind" stays as it is (so a kind-only key is stored
// WITHOUT the leading slash - see HasIgnoreDifference's lookup).
func convertToOverrideKey(groupKind string) (string, error) {
	parts := strings.Split(groupKind, "_")
	if len(parts) == 2 {
		return parts[0] + "/" + parts[1], nil
	}
	if len(parts) == 1 && groupKind != "" {
		return groupKind, nil
	}
	return "", fmt.Errorf("group kind should be in format `resource.customizations.<type>.<group_kind>` or resource.customizations.<type>.<kind>`, got group kind: '%s'", groupKind)
}

// groupKindForOverrideKey mirrors util/argo/normalizers/util.go
// getGroupKindForOverrideKey: on error both are empty (Argo only logs).
func groupKindForOverrideKey(key string) (group, kind string, err error) {
	parts := strings.Split(key, "/")
	switch len(parts) {
	case 2:
		return parts[0], parts[1], nil
	case 1:
		return "", parts[0], nil
	}
	return "", "", fmt.Errorf("override key must be <group>/<kind> or <kind>, got: '%s' ", key)
}

// rawResourceOverride is the legacy resource.customizations value shape
// (pkg/apis/application/v1alpha1/types.go rawResourceOverride): the
// ignoreDifferences fields are YAML strings inside the YAML.
type rawResourceOverride struct {
	IgnoreDifferences     string           `json:"ignoreDifferences,omitempty"`
	IgnoreResourceUpdates string           `json:"ignoreResourceUpdates,omitempty"`
	KnownTypeFields       []KnownTypeField `json:"knownTypeFields,omitempty"`
	HealthLua             string           `json:"health.lua,omitempty"`
	UseOpenLibs           bool             `json:"health.lua.useOpenLibs,omitempty"`
	Actions               string           `json:"actions,omitempty"`
}

// parseLegacyCustomizations mirrors ResourceOverride.UnmarshalJSON.
func parseLegacyCustomizations(v string) (map[string]ResourceOverride, error) {
	raw := map[string]rawResourceOverride{}
	if err := yaml.Unmarshal([]byte(v), &raw); err != nil {
		return nil, err
	}
	out := make(map[string]ResourceOverride, len(raw))
	for k, r := range raw {
		var o ResourceOverride
		o.KnownTypeFields = r.KnownTypeFields
		if err := yaml.Unmarshal([]byte(r.IgnoreDifferences), &o.IgnoreDifferences); err != nil {
			return nil, fmt.Errorf("%s.ignoreDifferences: %w", k, err)
		}
		if err := yaml.Unmarshal([]byte(r.IgnoreResourceUpdates), &o.IgnoreResourceUpdates); err != nil {
			return nil, fmt.Errorf("%s.ignoreResourceUpdates: %w", k, err)
		}
		out[k] = o
	}
	return out, nil
}

// bareStar finds a lone unquoted * as a mapping value or list item.
var bareStar = regexp.MustCompile(`(?m)^\s*(?:- )?(?:[\w.-]+:\s+|- )\*\s*(?:#.*)?$`)

// starHint adds the fix to a YAML error caused by an unquoted `*` (a YAML
// alias without a name), the most common mistake in kind/group globs.
func starHint(v string, err error) error {
	if err == nil || !bareStar.MatchString(v) {
		return err
	}
	return fmt.Errorf("%w (an unquoted * is a YAML alias: quote it: '*')", err)
}
