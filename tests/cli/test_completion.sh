#!/usr/bin/env bash
# Checks the bash completion of smpipe against the CLI itself:
#   bash tests/cli/test_completion.sh SMPIPE_BINARY COMPLETION_SCRIPT
# For every subcommand that `smpipe --help` lists, the options that `smpipe SUB --help` lists must be exactly
# the candidates for `smpipe SUB -`, and the completion must know which of them take a value; then a few
# completions of subcommands, models, machines, params and files. Completion is simulated: COMP_WORDS,
# COMP_CWORD, COMP_LINE and COMP_POINT are set as bash sets them, _smpipe is called, COMPREPLY is read.
# Exit 0 when all pass; otherwise 1, with one FAIL line per failure.
# shellcheck disable=SC2001,SC2013,SC2016,SC2086,SC2116  # $(echo $x) joins lines; a literal $(x)
set -u

if (($# != 2)); then
    echo "usage: $0 SMPIPE_BINARY COMPLETION_SCRIPT" >&2
    exit 2
fi
abspath() { # a path made absolute against the directory the test started in
    case $1 in
        /*) printf '%s\n' "$1" ;;
        *) printf '%s\n' "$PWD/$1" ;;
    esac
}
BIN=$(abspath "$1")
SCRIPT=$(abspath "$2")
[[ -f $BIN && -x $BIN ]] || { echo "FAIL: $1 is not an executable file" >&2; exit 1; }
[[ -f $SCRIPT ]] || { echo "FAIL: $2 is not a file" >&2; exit 1; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/smpipe-completion.XXXXXX") || exit 1
trap 'rm -rf -- "$TMP"' EXIT
mkdir -p "$TMP/bin" "$TMP/work/adir" "$TMP/work/pipes"
ln -s "$BIN" "$TMP/bin/smpipe"
printf '#!/bin/sh\necho "error: cannot read the models" >&2\nexit 1\n' >"$TMP/bin/broken-smpipe"
chmod +x "$TMP/bin/broken-smpipe"
touch "$TMP/work/prog.pipe" "$TMP/work/pipes/inner.pipe" "$TMP/work/hw_trace.json" "$TMP/work/hw_notes.txt" \
    "$TMP/work/machine.json" "$TMP/work/out.csv"
export PATH="$TMP/bin:$PATH"
unset CDPATH
cd "$TMP/work" || exit 1

failures=0
checks=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# ---- What the CLI says --------------------------------------------------------------------------------------
# help_section TEXT SECTION: the lines of SECTION ("Options:", "Subcommands:") up to the next blank line.
help_section() {
    awk -v s="$2" '$0 == s { on = 1; next } on && /^[^ ]/ { on = 0 } on && /^$/ { on = 0 } on { print }' <<<"$1"
}
# help_options TEXT: one line per option name, "NAME value" or "NAME flag" (a name followed by one space and
# a type, e.g. `--gpu TEXT`, `-D TEXT ...`, `--seed UINT:UINT64`, takes a value).
help_options() {
    local line names rest kind n
    while IFS= read -r line; do
        [[ $line =~ ^\ +(-[^ ]+)(.*)$ ]] || continue
        names=${BASH_REMATCH[1]}
        rest=${BASH_REMATCH[2]}
        kind=flag
        if [[ $rest =~ ^\ [^\ ] && ! $rest =~ ^\ (Needs|Excludes): ]]; then kind=value; fi
        IFS=, read -r -a ns <<<"$names"
        for n in "${ns[@]}"; do printf '%s %s\n' "$n" "$kind"; done
    done < <(help_section "$1" "Options:")
}

top_help=$("$BIN" --help 2>&1) || fail "smpipe --help exited with $?"
mapfile -t subcommands < <(help_section "$top_help" "Subcommands:" | awk '/^  [^ -]/ { print $1 }')
mapfile -t global_opts < <(help_options "$top_help" | awk '{ print $1 }')
((${#subcommands[@]} > 0)) || fail "no subcommands found in smpipe --help"
((${#global_opts[@]} > 0)) || fail "no options found in smpipe --help"

models_out=$("$BIN" models 2>&1) || fail "smpipe models exited with $?"
machines_line=$(grep '^machines (' <<<"$models_out")
mainloop_params=$(awk '$1 == "examples/mainloop" { for (i = 2; i <= NF; i++) { sub(/=.*/, "", $i); print $i } }' \
    <<<"$models_out" | sort)

# ---- The completion ----------------------------------------------------------------------------------------
# shellcheck source=/dev/null
source "$SCRIPT" 2>"$TMP/source.err" || fail "sourcing $SCRIPT failed"
[[ -s $TMP/source.err ]] && fail "sourcing $SCRIPT printed: $(cat "$TMP/source.err")"
declare -F _smpipe >/dev/null || { fail "$SCRIPT defines no _smpipe"; echo "$failures failure(s)"; exit 1; }
[[ $(complete -p smpipe 2>/dev/null) == *"-F _smpipe"* ]] || fail "$SCRIPT does not register: complete -F _smpipe smpipe"

COMP_WORDBREAKS=$' \t\n"\'@><=;|&(:'
# comp LINE: complete at the end of LINE; the candidates are left in `got` (sorted, one per line). The words
# are split as bash splits them: at blanks, and '=' and ':' become words of their own.
comp() {
    local line=$1 t piece
    local -a toks=() words=()
    read -r -a toks <<<"$line"
    [[ $line == *[[:blank:]] || -z $line ]] && toks+=("")
    for t in "${toks[@]}"; do
        [[ -z $t ]] && { words+=(""); continue; }
        while [[ -n $t ]]; do
            if [[ $t == [=:]* ]]; then piece=${t%%[!=:]*}; else piece=${t%%[=:]*}; fi
            words+=("$piece")
            t=${t#"$piece"}
        done
    done
    COMP_WORDS=("${words[@]}")
    COMP_CWORD=$((${#words[@]} - 1))
    COMP_LINE=$line
    COMP_POINT=${#line}
    COMPREPLY=()
    checks=$((checks + 1))
    _smpipe 2>"$TMP/comp.err"
    local rc=$?
    ((rc == 0)) || fail "[$line] _smpipe returned $rc"
    [[ -s $TMP/comp.err ]] && fail "[$line] printed on stderr: $(head -c 300 "$TMP/comp.err")"
    got=$( ((${#COMPREPLY[@]})) && printf '%s\n' "${COMPREPLY[@]}" | sort)
}
offers() { grep -qxF -- "$1" <<<"$got"; }
expect_has() { # LINE WORD...: each WORD is a candidate
    local line=$1 w
    shift
    comp "$line"
    for w in "$@"; do offers "$w" || fail "[$line] does not offer '$w' (offers: $(echo $got))"; done
}
expect_not() { # LINE WORD...: no WORD is a candidate
    local line=$1 w
    shift
    comp "$line"
    for w in "$@"; do offers "$w" && fail "[$line] offers '$w'"; done
    return 0
}
expect_exactly() { # LINE WORD...: the candidates are exactly the WORDs
    local line=$1 want
    shift
    comp "$line"
    want=$( (($#)) && printf '%s\n' "$@" | sort)
    [[ $got == "$want" ]] || fail "[$line] offers {$(echo $got)}, expected {$(echo $want)}"
}
# same_set WHAT WANT GOT: WANT and GOT hold the same lines; name what is missing and what is extra.
same_set() {
    local what=$1 missing extra
    missing=$(comm -23 <(sort -u <<<"$2") <(sort -u <<<"$3") | grep -v '^$')
    extra=$(comm -13 <(sort -u <<<"$2") <(sort -u <<<"$3") | grep -v '^$')
    [[ -n $missing ]] && fail "$what: --help lists $(echo $missing) but the completion does not offer it"
    [[ -n $extra ]] && fail "$what: the completion offers $(echo $extra), which --help does not list"
    return 0
}

# ---- Drift: subcommands and options against --help -----------------------------------------------------------
comp "smpipe "
same_set "smpipe (subcommands)" "$(printf '%s\n' "${subcommands[@]}")" "$got"
comp "smpipe -"
same_set "smpipe (global options)" "$(printf '%s\n' "${global_opts[@]}")" "$got"
comp "smpipe --"
same_set "smpipe -- (global options)" "$(printf '%s\n' "${global_opts[@]}" | grep -- '^--')" "$got"

for sub in "${subcommands[@]}"; do
    sub_help=$("$BIN" "$sub" --help 2>&1) || fail "smpipe $sub --help exited with $?"
    opts=$(help_options "$sub_help")
    [[ -n $opts ]] || { fail "no options found in smpipe $sub --help"; continue; }
    comp "smpipe $sub -"
    same_set "smpipe $sub -" "$(awk '{ print $1 }' <<<"$opts")" "$got"
    comp "smpipe $sub --"
    same_set "smpipe $sub --" "$(awk '$1 ~ /^--/ { print $1 }' <<<"$opts")" "$got"

    # Which options take a value: after `OPT 1`, the cursor is on the positional if OPT takes a value, and on
    # a second positional (nothing to offer) if it is a flag.
    case $sub in
        replay | compare) cur=hw_tr want=hw_trace.json ;;
        models) continue ;;  # no positional
        *) cur=examples/mai want=examples/mainloop ;;
    esac
    expect_has "smpipe $sub $cur" "$want"
    while read -r opt kind; do
        comp "smpipe $sub $opt 1 $cur"
        if [[ $kind == value ]]; then
            offers "$want" || fail "smpipe $sub: --help says $opt takes a value; the completion takes it for a flag"
        else
            offers "$want" && fail "smpipe $sub: --help says $opt is a flag; the completion expects a value after it"
        fi
    done <<<"$opts"
done

# ---- Subcommands, models, machines, params, files ------------------------------------------------------------
expect_exactly "smpipe ru" run
expect_exactly "smpipe mod" models
expect_has "smpipe run examples/mai" examples/mainloop
expect_has "smpipe check sm90/gemm_tma_ws_co" sm90/gemm_tma_ws_cooperative
expect_has "smpipe run --gpu h" h100-sxm h200
expect_not "smpipe run --gpu h" b200
expect_exactly "smpipe run prog.pipe --clock " boost sustained sustained-constant
expect_exactly "smpipe run prog.pipe --l2 " cold warm
expect_has "smpipe run --gpu=h" h100-sxm h200          # bash splits --gpu=h into --gpu = h
expect_has "smpipe run --gpu " machine.json adir
expect_not "smpipe run --gpu " hw_notes.txt prog.pipe
for m in $(sed 's/^[^:]*: //; s/, from .*//; s/,/ /g' <<<"$machines_line"); do
    expect_has "smpipe sweep prog.pipe --gpu " "$m"
done
expect_has "smpipe sweep prog.pipe --gpu h100-sxm,b" h100-sxm,b200
expect_exactly "smpipe run x.pipe -D "                 # no such file: nothing, and no error
expect_exactly "smpipe run x.pipe -D ST"
[[ -n $mainloop_params ]] || fail "smpipe models lists no params for examples/mainloop"
comp "smpipe run examples/mainloop -D "
same_set "smpipe run examples/mainloop -D (params)" "$(sed 's/$/=/' <<<"$mainloop_params")" "$got"
# the program may come after the cursor
COMP_WORDS=(smpipe sweep -D "" examples/mainloop)
COMP_CWORD=3
COMP_LINE="smpipe sweep -D  examples/mainloop"
COMP_POINT=16
COMPREPLY=()
_smpipe 2>"$TMP/comp.err"
[[ -s $TMP/comp.err ]] && fail "[smpipe sweep -D | examples/mainloop] printed: $(cat "$TMP/comp.err")"
got=$(printf '%s\n' "${COMPREPLY[@]}" | sort)
same_set "smpipe sweep -D | examples/mainloop (params)" "$(sed 's/$/=/' <<<"$mainloop_params")" "$got"
expect_exactly "smpipe run examples/mainloop -D STAGES=" # the value: nothing
expect_has "smpipe run examples/mainloop --kernel " mainloop
expect_has "smpipe run " prog.pipe adir pipes examples/mainloop
expect_not "smpipe run " hw_trace.json hw_notes.txt out.csv
expect_exactly "smpipe run pipes/" pipes/inner.pipe
expect_exactly "smpipe replay hw" hw_trace.json
expect_not "smpipe compare " prog.pipe hw_notes.txt
expect_has "smpipe run prog.pipe --trace hw" hw_trace.json hw_notes.txt
expect_has "smpipe replay hw_trace.json --emit-pipe p" prog.pipe pipes
expect_has "smpipe sweep prog.pipe --csv o" out.csv
expect_has "smpipe sweep prog.pipe --json hw" hw_trace.json hw_notes.txt
expect_exactly "smpipe run prog.pipe extra"            # one positional only
expect_exactly "smpipe models x"
expect_exactly "smpipe nosuchcommand --"
expect_exactly "smpipe run prog.pipe --seed "
expect_exactly "smpipe run prog.pipe --jitter=1"

# The binary under another name, or one that fails: models are gone, files remain, nothing is printed.
COMP_WORDS=("$TMP/bin/smpipe" run examples/mai)
COMP_CWORD=2
COMP_LINE="${COMP_WORDS[*]}"
COMP_POINT=${#COMP_LINE}
COMPREPLY=()
_smpipe 2>"$TMP/comp.err"
[[ -s $TMP/comp.err ]] && fail "[absolute path] printed: $(cat "$TMP/comp.err")"
[[ " ${COMPREPLY[*]-} " == *" examples/mainloop "* ]] || fail "[$COMP_LINE] does not offer examples/mainloop"
expect_has "broken-smpipe run pro" prog.pipe
expect_not "broken-smpipe run ex" examples/mainloop
expect_not "broken-smpipe run --gpu h" h100-sxm h200 b200
expect_exactly "broken-smpipe run prog.pipe -D "
expect_has "no-such-smpipe-binary run pro" prog.pipe
expect_exactly "no-such-smpipe-binary run prog.pipe -D "

# Odd input: nothing printed, no failure, also under `set -e` and `pipefail`.
for line in "smpipe" "smpipe run '" 'smpipe run "a b' "smpipe run --" "smpipe run -- -" "smpipe = =" \
    "smpipe run ::" "smpipe run -D=" "smpipe run --gpu=" "smpipe sweep x --group ," "smpipe run \\" \
    "smpipe run -D ''" "smpipe run '*' --kernel " 'smpipe run $(x) -D '; do
    comp "$line"
done
(
    set -euo pipefail
    COMP_WORDS=(smpipe run examples/mainloop -D "")
    COMP_CWORD=4
    COMP_LINE="smpipe run examples/mainloop -D "
    COMP_POINT=${#COMP_LINE}
    _smpipe
    COMP_WORDS=(smpipe run x.pipe --kernel "")
    COMP_LINE="smpipe run x.pipe --kernel "
    COMP_POINT=${#COMP_LINE}
    _smpipe
    echo ok
) >"$TMP/e.out" 2>&1
[[ $(cat "$TMP/e.out") == ok ]] || fail "under set -euo pipefail: $(cat "$TMP/e.out")"

if ((failures)); then
    echo "$failures of $checks completion checks failed"
    exit 1
fi
echo "ok: $checks completion checks"
exit 0
