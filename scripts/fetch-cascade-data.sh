#!/bin/sh
# Fetch and prepare the real key sets of the cascade evaluation
# (docs/cascade.md). Nothing here is committed: run it into a scratch dir.
#
#   sh scripts/fetch-cascade-data.sh DIR
#
# Downloads pinned Debian packages (apt-get download) and one npm package
# (npm pack), checks each archive's SHA-256, extracts them (dpkg-deb -x,
# tar) and writes, one key per line:
#
#   DIR/hosts.members     ad/tracker host names: "||host^" rules of the
#                         filter lists shipped in webext-ublock-origin-firefox
#   DIR/hosts.nonmembers  realistic other host names: the disposable-email
#                         domains (npm disposable-email-domains), words under
#                         public suffixes (publicsuffix's list), and host
#                         names built from English words — minus any member
#   DIR/words.members     SCOWL American English words (wamerican)
#   DIR/words.nonmembers  German, French and Spanish words (wngerman,
#                         wfrench, wspanish) that are not American English
#                         words
#
# Deterministic: the word combinations use a fixed Park-Miller generator
# (exact in awk's doubles), so every run writes the same files.
set -eu
DIR=${1:?usage: fetch-cascade-data.sh DIR}
mkdir -p "$DIR/dl" "$DIR/x"
cd "$DIR"

# package=version sha256-of-the-archive
DEBS="webext-ublock-origin-firefox=1.67.0+dfsg-1~deb12u1 9e9449b2ed66eca001a1effe7d3b98eedd5293e6ffca0d6cd7792ba14b570039
wamerican=2020.12.07-2 c8f8e2b2ad0d37bfdd41f0e40f1e4c8e5f907467d768a1d3698b164e9617f0b4
wngerman=20161207-11 9053a69641bcf59233055f1b3ca341046751534b2b32d1e32c67b23ab9b98fec
wfrench=1.2.7-2 a5cbe63b988adbdb973983aab5b76fe2b715e9a37b012f31ad1e925b1a4b4c29
wspanish=1.0.30 a2b7504fb8c12deaf6c4e868f749a3d05a42caee348f0f5bb006238e925cde18
publicsuffix=20230209.2326-1 791c92c681a3cefcc9721445dc8a301a1a3cb3eef40ac2c16a4d9dd9ad5a42d7"
NPM_PKG=disposable-email-domains@1.0.62
NPM_SHA=f221b2fd3d3b2429141f7f5856a59cfea2745f165c420ab4a48bb5697edaea00

check() { # file sha256
    got=$(sha256sum "$1" | cut -d' ' -f1)
    if [ "$got" != "$2" ]; then
        echo "fetch-cascade-data: $1: SHA-256 $got, expected $2" >&2
        exit 2
    fi
}

echo "$DEBS" | while read -r pv sha; do
    pkg=${pv%%=*}
    f=$(ls dl/"${pkg}"_*.deb 2>/dev/null | head -n1 || true)
    if [ -z "$f" ]; then
        (cd dl && apt-get download "$pv" >/dev/null 2>&1) || {
            echo "fetch-cascade-data: apt-get download $pv failed (run apt-get update?)" >&2
            exit 2
        }
        f=$(ls dl/"${pkg}"_*.deb | head -n1)
    fi
    check "$f" "$sha"
    dpkg-deb -x "$f" x
done
tgz=dl/disposable-email-domains-1.0.62.tgz
[ -f "$tgz" ] || (cd dl && npm pack "$NPM_PKG" >/dev/null 2>&1)
check "$tgz" "$NPM_SHA"
tar xzf "$tgz" -C x

export LC_ALL=C
UBO=$(find x/usr/share -type d -name 'uBlock0@raymondhill.net' | head -n1)
# members: "||host^" network rules of every shipped list
find "$UBO/assets" -name '*.txt' -exec cat {} + |
    grep -oE '^\|\|[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}\^' |
    sed 's/^||//; s/\^$//' | tr 'A-Z' 'a-z' | sort -u > hosts.members

# English words, lower case, letters only (for building host names)
grep -E '^[a-z]+$' x/usr/share/dict/american-english | sort -u > words.plain
# public suffixes without wildcards, exceptions or comments
grep -vE '^(//|!|\*|$)' x/usr/share/publicsuffix/public_suffix_list.dat |
    grep -E '^[a-z0-9.-]+$' > suffixes.txt

# non-members: disposable-email domains + words under suffixes + built names
{
    grep -oE '"[^"]+"' x/package/index.json | tr -d '"'
    awk -v seed=12345 '
        function rnd() { seed = (seed * 48271) % 2147483647; return seed }
        FNR == NR { s[ns++] = $0; next }
        { w[nw++] = $0 }
        END {
            split("www mail cdn api static shop blog news app img", subs, " ")
            split("com net org io co info de uk", tld, " ")
            for (i = 0; i < 60000; i++)
                print w[rnd() % nw] "." s[rnd() % ns]
            for (i = 0; i < 60000; i++) {
                a = w[rnd() % nw]; b = w[rnd() % nw]
                k = rnd() % 3
                if (k == 0) print subs[1 + rnd() % 10] "." a b "." tld[1 + rnd() % 8]
                else if (k == 1) print a "-" b "." tld[1 + rnd() % 8]
                else print a "." tld[1 + rnd() % 8]
            }
        }' suffixes.txt words.plain
} | tr 'A-Z' 'a-z' | sort -u | comm -23 - hosts.members > hosts.nonmembers

# words
sort -u x/usr/share/dict/american-english > words.members
cat x/usr/share/dict/ngerman x/usr/share/dict/french x/usr/share/dict/spanish |
    sort -u | comm -23 - words.members > words.nonmembers

rm -f words.plain suffixes.txt
wc -l hosts.members hosts.nonmembers words.members words.nonmembers
