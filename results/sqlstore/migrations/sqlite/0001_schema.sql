-- The schema of a results database (docs/scale.md, "Results in a database").
-- Times are TEXT, RFC 3339 in UTC with nine digits of fraction, so that they
-- sort as they compare; JSON is TEXT.
CREATE TABLE bundles (
	bundle TEXT PRIMARY KEY,
	status TEXT NOT NULL,
	error TEXT NOT NULL,
	started TEXT NOT NULL,
	duration_ms BIGINT NOT NULL,
	bundle_time TEXT,
	bundle_time_source TEXT NOT NULL,
	week TEXT NOT NULL,
	kubernetes_version TEXT NOT NULL,
	kubernetes_minor TEXT NOT NULL,
	inputs INT NOT NULL,
	skipped INT NOT NULL,
	max_severity TEXT NOT NULL,
	warning_count INT NOT NULL,
	suppressed_count INT NOT NULL,
	tool_version TEXT NOT NULL,
	schema_version TEXT NOT NULL,
	line TEXT NOT NULL,
	written_at TEXT NOT NULL
);
CREATE INDEX bundles_week ON bundles (week);
CREATE INDEX bundles_kubernetes_minor ON bundles (kubernetes_minor);

CREATE TABLE findings (
	bundle TEXT NOT NULL REFERENCES bundles (bundle) ON DELETE CASCADE,
	fingerprint TEXT NOT NULL,
	rule TEXT NOT NULL,
	severity TEXT NOT NULL,
	certainty TEXT NOT NULL,
	title TEXT NOT NULL,
	subject TEXT,
	facts TEXT,
	PRIMARY KEY (bundle, fingerprint)
);
CREATE INDEX findings_rule ON findings (rule);
CREATE INDEX findings_fingerprint ON findings (fingerprint);

CREATE TABLE inputs (
	bundle TEXT NOT NULL REFERENCES bundles (bundle) ON DELETE CASCADE,
	seq INT NOT NULL,
	path TEXT NOT NULL,
	format TEXT NOT NULL,
	kind TEXT NOT NULL,
	node TEXT NOT NULL,
	layout TEXT NOT NULL,
	records INT NOT NULL,
	skipped TEXT NOT NULL,
	PRIMARY KEY (bundle, seq)
);
