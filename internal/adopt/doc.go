// Package adopt writes drifted live values back into the YAML files they
// came from (issue 19), editing the bytes of the value and nothing else.
//
// Re-encoding a YAML tree (yaml.v3 or kyaml) normalises indentation,
// quoting, flow style and comment placement, so a one-field adoption would
// rewrite the whole file. Here yaml.v3 is used only to locate nodes: every
// edit is a splice of the original bytes at the node's position, and the
// result is parsed again and checked to decode to exactly the intended
// object (a splice that would change anything else is refused).
package adopt
