#!/usr/bin/env bash
# Adds Debian's non-free component to the Debian sources already configured for a release.
# Usage: apt-add-non-free.sh APT_DIR CODENAME      (scripts/setup.sh: /etc/apt and the running release)
#
# A Debian source is an entry whose suite is CODENAME or CODENAME-<name> (updates, security, backports);
# among those, every entry that has `main` and not `non-free` gets `non-free` appended to its components:
#   - deb822 stanzas of APT_DIR/sources.list.d/*.sources (their Components field);
#   - one-line deb/deb-src entries of APT_DIR/sources.list and APT_DIR/sources.list.d/*.list.
# Other repositories, commented-out entries and other files are left alone. Prints each file it changes;
# a second run changes nothing.
set -euo pipefail
[ $# = 2 ] || { echo "usage: $0 APT_DIR CODENAME" >&2; exit 2; }
apt_dir=$1
codename=$2

# Shared by both formats: is `suite` one of the release's suites?
awk_suite='function debianSuite(suite) { return suite == codename || index(suite, codename "-") == 1 }'

# deb822: stanzas are separated by blank lines; a field continues on lines that start with a space or
# tab; lines starting with # are comments.
awk_deb822=$awk_suite'
function hasWord(list, word,   n, i, w) {
  n = split(list, w, /[ \t]+/)
  for (i = 1; i <= n; i++) if (w[i] == word) return 1
  return 0
}
function flush(   i, n, s) {
  if (componentsLast && hasWord(components, "main") && !hasWord(components, "non-free")) {
    n = split(suites, s, /[ \t]+/)
    for (i = 1; i <= n; i++)
      if (s[i] != "" && debianSuite(s[i])) { sub(/[ \t]+$/, "", lines[componentsLast]); lines[componentsLast] = lines[componentsLast] " non-free"; break }
  }
  for (i = 1; i <= count; i++) print lines[i]
  count = 0; suites = ""; components = ""; componentsLast = 0; field = ""
}
/^[ \t]*$/ { flush(); print; next }
{ lines[++count] = $0 }
/^#/ { next }
/^[ \t]/ {
  if (field == "suites") suites = suites " " $0
  if (field == "components") { components = components " " $0; componentsLast = count }
  next
}
{
  name = tolower(substr($0, 1, index($0, ":") - 1)); value = substr($0, index($0, ":") + 1)
  field = name
  if (name == "suites") suites = value
  if (name == "components") { components = value; componentsLast = count }
}
END { flush() }'

# One-line entries: deb [options] URI SUITE COMPONENT...; a # starts a comment anywhere on a line.
awk_one_line=$awk_suite'
/^[ \t]*deb(-src)?[ \t]/ {
  entry = $0; comment = ""
  if ((c = index(entry, "#")) > 0) { comment = " " substr(entry, c); entry = substr(entry, 1, c - 1) }
  sub(/[ \t]+$/, "", entry)
  rest = entry
  sub(/^[ \t]*deb(-src)?[ \t]+/, "", rest)
  sub(/^\[[^]]*\][ \t]*/, "", rest)
  n = split(rest, w, /[ \t]+/)
  main = 0; nonFree = 0
  for (i = 3; i <= n; i++) { if (w[i] == "main") main = 1; if (w[i] == "non-free") nonFree = 1 }
  if (n >= 3 && debianSuite(w[2]) && main && !nonFree) { print entry " non-free" comment; next }
}
{ print }'

for file in "$apt_dir/sources.list" "$apt_dir"/sources.list.d/*.list "$apt_dir"/sources.list.d/*.sources; do
  [ -f "$file" ] || continue
  if [[ $file == *.sources ]]; then
    edited=$(awk -v codename="$codename" "$awk_deb822" "$file")
  else
    edited=$(awk -v codename="$codename" "$awk_one_line" "$file")
  fi
  if [ "$edited" != "$(cat "$file")" ]; then
    printf '%s\n' "$edited" > "$file"
    echo "added non-free to $file"
  fi
done
