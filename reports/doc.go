// Package reports turns suite results into something people and pipelines can act on.
//
// It reads results through one reader (ReadRun): the Ginkgo JSON report of our own runs, or
// JUnit files (foreign ones, or our own), plus the optional meta sidecar each suite run writes
// next to them. Each spec of our runs carries its result as data (Result, attached by the suite);
// only foreign reports are read from their text. A failed spec of our runs also carries its
// evidence as data (internal/evidence: the history of contract calls, the checkers'
// anomalies, a failure record), which the findings group by. Spec IDs come from the specs' "id:<ID>" labels,
// never from their text. It
// builds the behaviour x backend matrix (Matrix), renders it as Markdown, self-contained HTML and a terminal table, and
// gates a pipeline against a baseline of accepted results (Baseline, Gate). It also
// generates reports/catalogue.md from the catalogue table (specs/catalogue) and checks that
// every entry has exactly one spec (CheckCatalogue).
//
// Nothing here talks to a broker: the package only reads files the suite wrote.
package reports
