package report

// SchemaVersion is the version of the shape of netmortem's machine-readable
// outputs (JSON, YAML, batch lines; docs/report.schema.json): it changes
// when a field is removed or changes meaning, not when one is added.
const SchemaVersion = "1"
