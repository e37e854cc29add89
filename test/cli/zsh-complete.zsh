# Completes one command line in a real interactive zsh, as Tab does, and prints every candidate
# the completion script offered, one a line. Used by test/cli/completion.test.ts.
#   zsh -f zsh-complete.zsh SCRIPT 'interlock validate --me' OUT
zmodload zsh/zpty
script=$1 line=$2 out=$3
: >| $out
zpty -b z zsh -f -i
zpty -w z "PS1=''; OUT=${(q)out}; autoload -U compinit; compinit -u -D; source ${(q)script}"
zpty -w z 'compadd() { local -a found; builtin compadd -O found "$@"; print -rl -- $found >> $OUT; builtin compadd "$@"; }'
# Tab completes, then marks the end: nothing is typed after it, so no typeahead cuts it short.
zpty -w z 'complete-then-mark() { zle complete-word; print -r -- --done-- >> $OUT; }; zle -N complete-then-mark; bindkey "^I" complete-then-mark'
zpty -w -n z "$line"$'\t'
for i in {1..600}; do grep -q -- '^--done--$' $out && break; sleep 0.05; done
zpty -d z
grep -q -- '^--done--$' $out || { print -u2 'zsh-complete: no completion within 30 s'; exit 1; }
grep -v -- '^--done--$' $out | sort -u
