// Package agent is the A2C-SMCP Agent client: it joins an office, calls the
// tools of its Computers and browses their documents step by step
// (catalog → document → page → element) through dpe:// URIs.
package agent
