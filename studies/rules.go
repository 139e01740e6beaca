package studies

import "github.com/mcpdrill/mcpdrill/report"

// RuleNotScanned is the finding of a study row that never reached the
// scanner (a config, launch or internal failure); a row the scanner could
// not complete carries the scan's own findings (MCP-SCAN-*) instead.
const RuleNotScanned = "MCP-STUDY-NOT-SCANNED"

// Catalogue documents the rules a study reports besides the scan's.
func Catalogue() report.Catalogue {
	return report.Catalogue{
		{ID: RuleNotScanned, Severity: report.SeverityError, Title: "A server of the study was not scanned",
			Detail: "The servers.json entry never reached the scanner: it could not be turned into a target (config: an environment variable not set, a bad URL), its launch process exited or never listened on its port (launch), or mcpdrill itself failed on it (internal). The message gives the failure kind and reason. Only the CI formats of study run report it; results.json records the same as the row's failure and reason."},
	}
}
