"""``toolkit completion bash|zsh|fish``: a shell completion script, generated from the parsers.

The script is rendered from :func:`..catalog.agent_catalog`, so it completes exactly the
commands, subcommands and flags the program accepts (plus the global flags and the
choices of flags that have them); anywhere else it falls back to file names. Regenerate it
after upgrading toolkit.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..output import Output, Result
from ..parser import CommandParser

SHELLS = ("bash", "zsh", "fish")

DESCRIPTION = """\
Print a completion script for bash, zsh or fish on stdout. It completes command names
(queue:work and schedule:run included), the subcommands of generate, db and config, each
command's flags after `-`, and the values of flags with fixed choices; anywhere else, file
names. Under --json, data is {"shell", "script"}."""

EPILOG = """\
installation:
  toolkit completion bash > ~/.local/share/bash-completion/completions/toolkit
  toolkit completion zsh > "${fpath[1]}/_toolkit"     # then: autoload -U compinit && compinit
  toolkit completion fish > ~/.config/fish/completions/toolkit.fish

for the current shell only:
  source <(toolkit completion bash)    # or zsh
  toolkit completion fish | source"""

#: Global flags accepted after a command too (``--version`` only stands alone).
_COMMAND_GLOBALS = ("--json", "--quiet", "--no-color", "--help")


def configure(parser: CommandParser) -> None:
    """Add the ``shell`` argument."""
    parser.add_argument(
        "shell", choices=SHELLS, help="the shell to complete for: " + ", ".join(SHELLS)
    )


def run(args: argparse.Namespace, out: Output) -> Result:
    """Render the script for ``args.shell``; print it (text) or return it (``--json``)."""
    script = render(args.shell)
    if out.json_mode:
        return Result(data={"shell": args.shell, "script": script})
    out.stdout.write(script)
    out.stdout.flush()
    return Result()


# --------------------------------------------------------------------------- the model


class _Flag:
    """One flag: its spellings, help text, whether it takes a value, and its choices."""

    __slots__ = ("choices", "names", "takes_value", "usage")

    def __init__(self, spec: dict[str, Any]) -> None:
        self.names = [spec["name"], *([spec["shorthand"]] if spec.get("shorthand") else [])]
        self.usage = _one_line(spec.get("usage") or "")
        self.takes_value = spec.get("type") not in ("bool", "count")
        self.choices = [str(choice) for choice in spec.get("choices") or []]


class _Context:
    """What may be typed after a command path (``""`` for the top level, ``"db migrate"``)."""

    __slots__ = ("flags", "key", "subcommands", "words")

    def __init__(self, key: str) -> None:
        self.key = key
        self.subcommands: list[tuple[str, str]] = []
        self.flags: list[_Flag] = []
        self.words: list[str] = []


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _model() -> tuple[list[_Context], dict[str, str]]:
    """Return every completion context (top level first) and the command aliases."""
    from ..catalog import agent_catalog

    catalog = agent_catalog()
    globals_ = [_Flag(spec) for spec in catalog["globalFlags"]]
    command_globals = [flag for flag in globals_ if flag.names[0] in _COMMAND_GLOBALS]
    top = _Context("")
    top.flags = globals_
    contexts = [top]
    aliases: dict[str, str] = {}

    def add(entry: dict[str, Any]) -> None:
        context = _Context(entry["name"])
        context.flags = [_Flag(spec) for spec in entry.get("flags") or []] + command_globals
        context.subcommands = [
            (sub["name"].rsplit(" ", 1)[-1], _one_line(sub.get("short") or ""))
            for sub in entry.get("subcommands") or []
        ]
        if entry["name"] == "completion":
            context.words = list(SHELLS)
        contexts.append(context)
        for sub in entry.get("subcommands") or []:
            add(sub)

    for entry in catalog["commands"]:
        top.subcommands.append((entry["name"], _one_line(entry.get("short") or "")))
        for alias in entry.get("aliases") or []:
            aliases[alias] = entry["name"]
        add(entry)
    return contexts, aliases


def render(shell: str) -> str:
    """Return the completion script for ``shell`` (one of :data:`SHELLS`)."""
    contexts, aliases = _model()
    renderer = {"bash": _bash, "zsh": _zsh, "fish": _fish}[shell]
    return renderer(contexts, aliases)


def _sq(text: str) -> str:
    """Quote ``text`` for bash or zsh: one single-quoted word."""
    return "'" + text.replace("'", "'\\''") + "'"


def _value_flags(contexts: list[_Context]) -> list[tuple[str, list[str]]]:
    """``("<key> <flag>", choices)`` for every flag that takes a value, in every context."""
    rows = []
    for context in contexts:
        for flag in context.flags:
            if flag.takes_value:
                rows.extend((f"{context.key} {name}", flag.choices) for name in flag.names)
    return rows


def _alias_patterns(aliases: dict[str, str]) -> list[tuple[str, str]]:
    targets: dict[str, list[str]] = {}
    for alias, target in sorted(aliases.items()):
        targets.setdefault(target, []).append(alias)
    return [("|".join(names), target) for target, names in sorted(targets.items())]


# --------------------------------------------------------------------------- bash

_BASH_MAIN = r"""
_toolkit() {
    # The words come from COMP_LINE, not COMP_WORDS: bash splits COMP_WORDS on ':' too
    # (COMP_WORDBREAKS), which would cut queue:work into three words.
    local line="${COMP_LINE:0:COMP_POINT}"
    local -a words=()
    read -r -a words <<< "$line"
    local cur=""
    if [[ -n "$line" && "$line" != *[[:space:]] && ${#words[@]} -gt 0 ]]; then
        cur="${words[${#words[@]}-1]}"
        unset "words[${#words[@]}-1]"
    fi
    local cmd="" sub="" prev="" word
    for word in "${words[@]:1}"; do
        prev="$word"
        [[ "$word" == -* ]] && continue
        if [[ -z "$cmd" ]]; then
            cmd="$(_toolkit_alias "$word")"
        elif [[ -z "$sub" && -n "$(_toolkit_subcommands "$cmd")" ]]; then
            sub="$word"
        fi
    done
    local key="$cmd${sub:+ $sub}" candidates="" values
    COMPREPLY=()
    if values="$(_toolkit_flag_values "$key" "$prev")"; then
        # The previous word is a flag that takes a value: its choices, else file names.
        [[ -z "$values" ]] && return 0
        candidates="$values"
    elif [[ "$cur" == -* ]]; then
        candidates="$(_toolkit_flags "$key")"
    elif [[ -z "$cmd" ]]; then
        candidates="$(_toolkit_subcommands "")"
    elif [[ -z "$sub" && -n "$(_toolkit_subcommands "$cmd")" ]]; then
        candidates="$(_toolkit_subcommands "$cmd")"
    else
        candidates="$(_toolkit_words "$key")"
        [[ -z "$candidates" ]] && return 0
    fi
    local reply
    while IFS= read -r reply; do
        [[ -n "$reply" ]] && COMPREPLY+=("$reply")
    done < <(compgen -W "$candidates" -- "$cur")
    # Bash replaces only the text after the last ':' of the word (as bash-completion's
    # __ltrim_colon_completions does): drop what comes before it from every match.
    if [[ "$cur" == *:* && "${COMP_WORDBREAKS:-:}" == *:* ]]; then
        local colon_prefix="${cur%"${cur##*:}"}" i
        for i in "${!COMPREPLY[@]}"; do
            COMPREPLY[i]="${COMPREPLY[i]#"$colon_prefix"}"
        done
    fi
    return 0
}

complete -o default -F _toolkit toolkit
"""


def _banner(shell: str, install_path: str) -> list[str]:
    """Return the comment every script opens with: what made it, where it goes, when to redo it."""
    return [
        f"# {shell} completion for toolkit, generated by `toolkit completion {shell}`.",
        f"# Install: toolkit completion {shell} > {install_path}",
        "# Regenerate it after upgrading toolkit.",
        "",
    ]


def _bash_case(function: str, comment: str, arms: list[tuple[str, str]], default: str) -> str:
    lines = [f"{function}() {{", f"    # {comment}", '    case "$*" in']
    lines += [f"        {pattern}) {body} ;;" for pattern, body in arms]
    lines += [f"        *) {default} ;;", "    esac", "}", ""]
    return "\n".join(lines)


def _bash(contexts: list[_Context], aliases: dict[str, str]) -> str:
    parts = [
        *_banner("bash", "~/.local/share/bash-completion/completions/toolkit"),
        _bash_case(
            "_toolkit_alias",
            "the canonical name of a command",
            [(pattern, f"echo {target}") for pattern, target in _alias_patterns(aliases)],
            'echo "$1"',
        ),
        _bash_case(
            "_toolkit_subcommands",
            'the commands ("") or the subcommands of a command',
            [
                (_sq(c.key), "echo " + _sq(" ".join(name for name, _ in c.subcommands)))
                for c in contexts
                if c.subcommands
            ],
            ":",
        ),
        _bash_case(
            "_toolkit_flags",
            "the flags after a command path",
            [
                (_sq(c.key), "echo " + _sq(" ".join(n for f in c.flags for n in f.names)))
                for c in contexts
            ],
            ":",
        ),
        _bash_case(
            "_toolkit_words",
            "fixed positional values after a command path",
            [(_sq(c.key), "echo " + _sq(" ".join(c.words))) for c in contexts if c.words],
            ":",
        ),
        _bash_case(
            "_toolkit_flag_values",
            "succeed when flag $2 of command path $1 takes a value; print its choices",
            [
                (_sq(pair), "echo " + _sq(" ".join(choices)) if choices else "return 0")
                for pair, choices in _value_flags(contexts)
            ],
            "return 1",
        ),
    ]
    return "\n".join(parts) + _BASH_MAIN.lstrip("\n")


# --------------------------------------------------------------------------- zsh

_ZSH_MAIN = r"""
_toolkit() {
  local cmd= sub= word prev=${words[CURRENT-1]}
  local -a _toolkit_reply
  local -i i
  for (( i = 2; i < CURRENT; i++ )); do
    word=${words[i]}
    [[ $word == -* ]] && continue
    if [[ -z $cmd ]]; then
      cmd=$(_toolkit_alias "$word")
    elif [[ -z $sub ]]; then
      _toolkit_subcommands "$cmd"
      (( ${#_toolkit_reply} )) && sub=$word
    fi
  done
  local key=$cmd${sub:+ $sub}
  if _toolkit_flag_values "$key" "$prev"; then
    # The previous word is a flag that takes a value: its choices, else file names.
    if (( ${#_toolkit_reply} )); then
      compadd -a _toolkit_reply
    else
      _files
    fi
    return
  fi
  if [[ $PREFIX == -* ]]; then
    _toolkit_flags "$key"
    _describe -t options 'toolkit flag' _toolkit_reply
    return
  fi
  if [[ -z $sub ]]; then
    _toolkit_subcommands "$cmd"
    if (( ${#_toolkit_reply} )); then
      _describe -t commands 'toolkit command' _toolkit_reply
      return
    fi
  fi
  _toolkit_words "$key"
  if (( ${#_toolkit_reply} )); then
    compadd -a _toolkit_reply
    return
  fi
  _files
}

if [[ $funcstack[1] == _toolkit ]]; then
  _toolkit "$@"
else
  compdef _toolkit toolkit
fi
"""


def _zsh_item(name: str, usage: str) -> str:
    """One ``_describe`` item, ``name:description``, with the name's colons escaped."""
    return _sq(name.replace(":", "\\:") + (f":{usage}" if usage else ""))


def _zsh_case(function: str, comment: str, arms: list[tuple[str, str]], default: str) -> str:
    lines = [f"{function}() {{", f"  # {comment}", '  case "$*" in']
    lines += [f"    {pattern}) {body} ;;" for pattern, body in arms]
    lines += [f"    *) {default} ;;", "  esac", "}", ""]
    return "\n".join(lines)


def _zsh_array(items: list[str]) -> str:
    return "_toolkit_reply=(" + " ".join(items) + ")"


def _zsh(contexts: list[_Context], aliases: dict[str, str]) -> str:
    parts = [
        "#compdef toolkit",
        *_banner("zsh", '"${fpath[1]}/_toolkit"'),
        _zsh_case(
            "_toolkit_alias",
            "the canonical name of a command",
            [(pattern, f"print -r -- {target}") for pattern, target in _alias_patterns(aliases)],
            'print -r -- "$1"',
        ),
        _zsh_case(
            "_toolkit_subcommands",
            'the commands ("") or the subcommands of a command, as name:description',
            [
                (_sq(c.key), _zsh_array([_zsh_item(n, u) for n, u in c.subcommands]))
                for c in contexts
                if c.subcommands
            ],
            "_toolkit_reply=()",
        ),
        _zsh_case(
            "_toolkit_flags",
            "the flags after a command path, as name:description",
            [
                (_sq(c.key), _zsh_array([_zsh_item(n, f.usage) for f in c.flags for n in f.names]))
                for c in contexts
            ],
            "_toolkit_reply=()",
        ),
        _zsh_case(
            "_toolkit_words",
            "fixed positional values after a command path",
            [(_sq(c.key), _zsh_array([_sq(w) for w in c.words])) for c in contexts if c.words],
            "_toolkit_reply=()",
        ),
        _zsh_case(
            "_toolkit_flag_values",
            "succeed when flag $2 of command path $1 takes a value; its choices in the reply",
            [
                (_sq(pair), _zsh_array([_sq(choice) for choice in choices]))
                for pair, choices in _value_flags(contexts)
            ],
            "_toolkit_reply=(); return 1",
        ),
    ]
    return "\n".join(parts) + _ZSH_MAIN


# --------------------------------------------------------------------------- fish

_FISH_HELPERS = r"""
function __toolkit_path --description 'the command path typed so far: "", "compile", "db migrate"'
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l cmd
    for token in $tokens
        string match -q -- '-*' $token; and continue
        if test -z "$cmd"
            set cmd (__toolkit_alias $token)
            contains -- $cmd $__toolkit_with_subcommands; or break
        else
            echo "$cmd $token"
            return
        end
    end
    echo $cmd
end

function __toolkit_at --description 'true when the command path typed so far is $argv'
    set -l path (__toolkit_path)
    test "$path" = "$argv"
end
"""


def _fq(text: str) -> str:
    """Quote ``text`` for fish: one single-quoted word."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _fish_flag(condition: str, flag: _Flag) -> str:
    parts = ["complete -c toolkit"]
    if condition:
        parts.append(f"-n {_fq(condition)}")
    for name in flag.names:
        if name.startswith("--"):
            parts.append(f"-l {_fq(name[2:])}")
        elif len(name) == 2:
            parts.append(f"-s {_fq(name[1:])}")
        else:
            parts.append(f"-o {_fq(name[1:])}")
    if flag.choices:
        parts.append("-x -a " + _fq(" ".join(flag.choices)))
    elif flag.takes_value:
        parts.append("-r")
    if flag.usage:
        parts.append(f"-d {_fq(flag.usage)}")
    return " ".join(parts)


def _fish(contexts: list[_Context], aliases: dict[str, str]) -> str:
    with_subcommands = [c.key for c in contexts if c.key and c.subcommands]
    lines = [
        *_banner("fish", "~/.config/fish/completions/toolkit.fish"),
        "complete -c toolkit -e",
        "set -g __toolkit_with_subcommands " + " ".join(_fq(k) for k in with_subcommands),
        "",
        "function __toolkit_alias --description 'the canonical name of a command'",
        "    switch $argv[1]",
    ]
    for pattern, target in _alias_patterns(aliases):
        lines += [
            f"        case {' '.join(_fq(a) for a in pattern.split('|'))}",
            f"            echo {_fq(target)}",
        ]
    lines += ["        case '*'", "            echo $argv[1]", "    end", "end"]
    lines.append(_FISH_HELPERS)
    for context in contexts:
        condition = f"__toolkit_at {context.key}" if context.key else "__toolkit_at"
        title = f"toolkit {context.key}".strip()
        lines.append(f"# {title}")
        for name, usage in context.subcommands:
            line = f"complete -c toolkit -n {_fq(condition)} -f -a {_fq(name)}"
            lines.append(line + (f" -d {_fq(usage)}" if usage else ""))
        if context.words:
            lines.append(
                f"complete -c toolkit -n {_fq(condition)} -f -a {_fq(' '.join(context.words))}"
            )
        lines.extend(_fish_flag(condition, flag) for flag in context.flags)
        lines.append("")
    return "\n".join(lines)
