# drive.zsh SCRIPT LINE...: types each LINE and a TAB into an interactive
# zsh (module zsh/zpty) that has compinit and SCRIPT loaded, and prints
# for each LINE the matches the completion offered ("m:MATCH"), the line
# as completion left it ("b:LINE") and "end". The markers are built from
# pieces so that the shell's echo of the commands never contains them.
zmodload zsh/zpty || exit 3
script=$1; shift
zpty z zsh -f -i
zpty -w z 'PS1=""; RPS1=""'
zpty -w z 'autoload -Uz compinit && compinit -u -D'
zpty -w z "source ${(q)script}"
zpty -w z 'compadd() { if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return; fi; local -a m; builtin compadd -A m "$@"; local x; for x in $m; do print -r -- "<""m>$x" >/dev/tty; done; builtin compadd "$@"; }'
zpty -w z '_show() { print -r -- "<""b>$BUFFER" >/dev/tty; print -r -- "<""end>" >/dev/tty; BUFFER=""; }; zle -N _show; bindkey "^Y" _show'
for line in "$@"; do
  zpty -n -w z "$line"$'\t'$'\x19'
  while zpty -r z out; do
    out=${out//$'\r'/}; out=${out%$'\n'}
    case $out in
    (*"<end>"*) print -r -- "end"; break ;;
    (*"<m>"*) print -r -- "m:${out#*<m>}" ;;
    (*"<b>"*) print -r -- "b:${out#*<b>}" ;;
    esac
  done
done
zpty -d z
