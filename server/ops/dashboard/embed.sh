#!/bin/sh
# embed.sh FILE NAME - prints C source defining NAME (FILE's text) and NAME_len, so the server
# serves its dashboard page from its own binary (no files to install, no CDN).
set -eu
file=$1
name=$2
printf '/* Generated from %s by server/ops/dashboard/embed.sh; do not edit. */\n' "$file"
printf '#include <stddef.h>\n\nextern const char %s[];\nextern const size_t %s_len;\n' \
    "$name" "$name"
printf 'const char %s[] =\n' "$name"
# Backslashes and quotes escaped; '?' too, so that no trigraph survives -std=c11.
sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/?/\\?/g' -e 's/^/    "/' -e 's/$/\\n"/' "$file"
printf '    "";\nconst size_t %s_len = sizeof %s - 1;\n' "$name" "$name"
