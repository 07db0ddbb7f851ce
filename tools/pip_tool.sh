# pip_tool.sh, sourced: pip_tool WHO VENV PACKAGE VERSION installs PACKAGE==VERSION from the
# package index into the virtualenv VENV (made first) unless it holds that version already,
# saying so on stderr as WHO. The linters (tools/ci_lint.sh, tools/py_lint.sh) install
# their Python tools this way, on first use.
pip_tool() {
  local who="$1" venv="$2" package="$3" version="$4"
  if [ -x "$venv/bin/python" ] &&
     [ "$("$venv/bin/python" -c "import importlib.metadata as m; print(m.version('$package'))" 2>/dev/null)" = "$version" ]; then
    return 0
  fi
  echo "$who: installing $package==$version into $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "$package==$version"
}
