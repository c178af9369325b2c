package main

import (
	"context"
	"fmt"
	"strings"
)

// The shell completion of smcp-agent (completion bash|zsh): command names
// (also after the global flags), and dpe:// URIs through smcp-agent complete, passing on the connection
// flags of the line being completed (--server, --office, --name,
// --api-key, --computer; the SMCP_* environment otherwise).

const bashCompletion = `# bash completion for smcp-agent; load with: source <(smcp-agent completion bash)
_smcp_agent() {
	local line="${COMP_LINE:0:COMP_POINT}"
	local cur="${line##*[[:space:]]}"
	local -a fwd=()
	local i w cmd=
	for ((i = 1; i < COMP_CWORD; i++)); do
		w="${COMP_WORDS[i]}"
		case "$w" in
		--server | --office | --name | --api-key | --computer | -server | -office | -name | -api-key | -computer)
			fwd+=("$w" "${COMP_WORDS[i + 1]}")
			((i++))
			;;
		--server=* | --office=* | --name=* | --api-key=* | --computer=*)
			fwd+=("$w")
			;;
		--timeout | --protocol-versions | --log-level | -timeout | -protocol-versions | -log-level)
			((i++))
			;;
		-*) ;;
		*) [[ -z "$cmd" ]] && cmd="$w" ;;
		esac
	done
	COMPREPLY=()
	if [[ -z "$cmd" && "$cur" != -* ]]; then
		COMPREPLY=($(compgen -W "%s" -- "$cur"))
		return 0
	fi
	case "$cur" in
	d | dp | dpe | dpe:* )
		local IFS=$'\n'
		COMPREPLY=($(smcp-agent "${fwd[@]}" complete -- "$cur" 2>/dev/null))
		# bash splits words at ':': offer what follows the last one.
		local colon="${cur%%"${cur##*:}"}"
		if [[ -n "$colon" ]]; then
			COMPREPLY=("${COMPREPLY[@]#"$colon"}")
		fi
		compopt -o nospace 2>/dev/null
		;;
	esac
	return 0
}
complete -F _smcp_agent smcp-agent
`

const zshCompletion = `#compdef smcp-agent
# zsh completion for smcp-agent; load with: source <(smcp-agent completion zsh)
_smcp_agent() {
	local -a fwd cands
	local i w cmd=
	for ((i = 2; i < CURRENT; i++)); do
		w="${words[i]}"
		case "$w" in
		--server|--office|--name|--api-key|--computer|-server|-office|-name|-api-key|-computer) fwd+=("$w" "${words[i+1]}"); ((i++)) ;;
		--server=*|--office=*|--name=*|--api-key=*|--computer=*) fwd+=("$w") ;;
		--timeout|--protocol-versions|--log-level|-timeout|-protocol-versions|-log-level) ((i++)) ;;
		-*) ;;
		*) [[ -z "$cmd" ]] && cmd="$w" ;;
		esac
	done
	if [[ -z "$cmd" && "$PREFIX" != -* ]]; then
		compadd -- %s
		return
	fi
	case "$PREFIX" in
	d|dp|dpe|dpe:*)
		cands=("${(@f)$(smcp-agent "${fwd[@]}" complete -- "$PREFIX" 2>/dev/null)}")
		compadd -S '' -Q -U -- "${cands[@]}"
		;;
	esac
}
if [[ "${funcstack[1]}" == _smcp_agent ]]; then
	_smcp_agent "$@"
else
	compdef _smcp_agent smcp-agent
fi
`

// cmdCompletion prints the completion script of a shell; it needs no
// Server.
func cmdCompletion(_ context.Context, e *env, args []string) error {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	switch args[0] {
	case "bash":
		_, err := fmt.Fprintf(e.out, bashCompletion, strings.Join(names, " "))
		return err
	case "zsh":
		_, err := fmt.Fprintf(e.out, zshCompletion, strings.Join(names, " "))
		return err
	}
	return usagef("completion: want bash or zsh, not %q", args[0])
}
