#!/bin/sh
# Regenerates the test documents of this folder from sample.md and
# sample.csv with the tools people make such documents with: pandoc
# (docx, odt, pptx, epub, html), LibreOffice headless (pdf, doc and rtf
# from the docx, ppt and odp from the pptx, xlsx and ods from the csv, xls
# from the csv by way of a flat ODS given document properties), gzip, and
# Python's email and mailbox modules (make_mail.py: eml, mbox).  The
# results are committed, so `make test` needs none of these tools; run
# this only to change the documents:
#   apt-get install pandoc libreoffice-writer-nogui libreoffice-calc-nogui \
#       libreoffice-impress-nogui
#   tests/docs/make.sh
# Every document holds the sentence "The quick sluice gate opens at dawn"
# (the csv's and the spreadsheets' in a cell); the text ones and the .xls
# also carry title "Sluice Sample Report", author "Ada Lovelace" and date
# 2024-03-15 (the .xls as its creation date).
set -eu
cd "$(dirname "$0")"
out=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HOME="$work/home" # LibreOffice's profile, thrown away
mkdir -p "$HOME"
cp sample.md sample.csv "$work/"
cd "$work"
for f in docx odt pptx epub; do
    pandoc sample.md -o "sample.$f"
done
pandoc -s sample.md -o sample.html
lo() {
    timeout 120 soffice --headless --norestore --convert-to "$1" "$2" >/dev/null 2>&1
}
lo pdf sample.docx
lo doc sample.docx
# LibreOffice's RTF, unlike pandoc's, has the \info group (title, author,
# \creatim) that the metadata of an RTF document comes from
lo rtf sample.docx
lo xlsx sample.csv
lo ods sample.csv
# A csv has no properties: the flat ODS LibreOffice makes of it is given
# a title, an author and a creation date before it becomes the .xls, whose
# SummaryInformation then holds them
lo fods sample.csv
sed 's|<office:meta>|&<dc:title>Sluice Sample Report</dc:title><meta:initial-creator>Ada Lovelace</meta:initial-creator><dc:creator>Ada Lovelace</dc:creator><meta:creation-date>2024-03-15T10:00:00</meta:creation-date>|' \
    sample.fods >props.fods
mv props.fods sample.fods
lo xls sample.fods
# The .ppt is large for what it holds: LibreOffice always puts a bitmap
# preview of the first slide (~430 KiB, 16 KiB compressed) into its
# SummaryInformation
lo ppt sample.pptx
lo odp sample.pptx
gzip -9n <sample.md >sample.md.gz
for f in docx odt pptx epub html rtf pdf doc xlsx ods xls ppt odp md.gz; do
    cp "sample.$f" "$out/"
done
python3 "$out/make_mail.py" # sample.eml, sample.mbox (attaches sample.pdf)
echo "tests/docs: $(ls "$out" | wc -l) files"
