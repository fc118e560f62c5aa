package jq

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// RedactedError is a jq run's error told without the values it ran on:
// what kind of failure it was, and nothing the input supplied. The
// original stays reachable for errors.Is and errors.As, but Error never
// prints it.
type RedactedError struct {
	class string
	err   error
}

// Error is the kind of failure only.
func (e *RedactedError) Error() string { return e.class }

// Unwrap returns the original error (do not print it: it quotes values).
func (e *RedactedError) Unwrap() error { return e.err }

// Redact returns err told without a byte of the values the program ran
// on, for jq runs on Secrets. gojq's messages quote the value a builtin
// failed on (a 24-byte preview, or the whole string given to error),
// and a builtin's argument may be derived from the data too
// (`ltrimstr(.data.x)`), so no part of the message is kept: the text is
// built from the error's Go type (Class) and, for a builtin that failed,
// its name when the program itself spells it. Redaction by pattern
// (cutting gojq's text at a colon) leaked whenever gojq's wording did not
// fit the pattern; a type has no wording to misread.
//
// ErrTimeout is returned as it is: its text is ours. nil stays nil.
func Redact(err error, program string) error {
	if err == nil || errors.Is(err, ErrTimeout) {
		return err
	}
	class := Class(err)
	if name := builtinName(err); name != "" && mentions(program, name) {
		class = name + ": " + class
	}
	return &RedactedError{class: "jq " + class, err: err}
}

// gojqClasses names each error type gojq v0.12 declares (error.go) by
// what went wrong, in words that quote nothing. TestEveryGojqErrorHasAClass
// fails when gojq gains a type that is not here, so an upgrade cannot
// bring an error form in unnoticed (it would still be redacted, to
// the generic class).
var gojqClasses = map[string]string{
	"expectedObjectError":        "expected an object",
	"expectedArrayError":         "expected an array",
	"iteratorError":              "cannot iterate over this value",
	"arrayIndexNegativeError":    "negative array index",
	"arrayIndexTooLargeError":    "array index too large",
	"repeatStringTooLargeError":  "repeated string too large",
	"objectKeyNotStringError":    "object key is not a string",
	"arrayIndexNotNumberError":   "array index is not a number",
	"stringIndexNotNumberError":  "string index is not a number",
	"expectedStartEndError":      "slice bounds are not numbers",
	"lengthMismatchError":        "length mismatch",
	"inputNotAllowedError":       "input not allowed",
	"funcNotFoundError":          "function not defined",
	"func0TypeError":             "cannot be applied to a value of this type",
	"func1TypeError":             "cannot be applied to a value of this type",
	"func2TypeError":             "cannot be applied to a value of this type",
	"func0WrapError":             "failed on the value",
	"func1WrapError":             "failed on the value",
	"func2WrapError":             "failed on the value",
	"exitCodeError":              "error() raised a value",
	"HaltError":                  "halt_error raised a value",
	"flattenDepthError":          "negative flatten depth",
	"timeArrayError":             "expected an array of 8 numbers",
	"timeEpochError":             "number of seconds out of range",
	"timeNumberError":            "number out of range",
	"unaryTypeError":             "operator cannot be applied to a value of this type",
	"binopTypeError":             "operator cannot be applied to values of these types",
	"zeroDivisionError":          "division by zero",
	"zeroModuloError":            "modulo by zero",
	"formatNotFoundError":        "format not defined",
	"formatRowError":             "cannot format an array with this element",
	"tooManyVariableValuesError": "too many variable values",
	"expectedVariableError":      "expected a variable",
	"variableNotFoundError":      "variable not defined",
	"variableNameError":          "invalid variable name",
	"breakError":                 "label not defined",
	"tryEndError":                "error inside try",
	"invalidPathError":           "invalid path",
	"invalidPathIterError":       "invalid path on iteration",
	"queryParseError":            "invalid query",
	"jsonParseError":             "invalid JSON",
	"ParseError":                 "invalid query",
}

// Class says what kind of failure err is, from its Go type alone: a
// gojq error type's class, else "runtime error (TYPE)".
func Class(err error) string {
	t := strings.TrimPrefix(fmt.Sprintf("%T", err), "*")
	if name, ok := strings.CutPrefix(t, "gojq."); ok {
		if c, ok := gojqClasses[name]; ok {
			return c
		}
	}
	return "runtime error (" + t + ")"
}

// IsClass reports whether s is a text Class can return: a gojq class, or
// the generic one. Tests use it to check that a redacted error says a
// class and nothing else.
func IsClass(s string) bool {
	for _, c := range gojqClasses {
		if s == c {
			return true
		}
	}
	return genericClassRE.MatchString(s)
}

// genericClassRE is the generic class: a Go type name, never a value.
var genericClassRE = regexp.MustCompile(`^runtime error \(\*?[A-Za-z0-9_./]+\)$`)

// identRE is a jq builtin's name as gojq's messages begin with it
// ("tonumber cannot be applied to ...", "@base64d cannot ...",
// "ltrimstr(...) cannot ...").
var identRE = regexp.MustCompile(`^@?[A-Za-z_][A-Za-z0-9_]*`)

// builtinName is the name of the builtin that failed, for the errors
// whose message starts with it; "" otherwise.
func builtinName(err error) string {
	t := fmt.Sprintf("%T", err)
	if !strings.HasPrefix(t, "*gojq.func") || !strings.HasSuffix(t, "Error") || t == "*gojq.funcNotFoundError" {
		return ""
	}
	return identRE.FindString(err.Error())
}

// mentions reports whether the program spells name as a word: only then
// is naming it in the redacted text saying nothing the rule did not say.
func mentions(program, name string) bool {
	for i := 0; ; {
		j := strings.Index(program[i:], name)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(name)
		if (start == 0 || !isIdent(program[start-1])) && (end == len(program) || !isIdent(program[end])) {
			return true
		}
		i = end
	}
}

func isIdent(b byte) bool {
	return b == '_' || b == '@' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}
