#!/usr/bin/env python3
"""Writes sample.eml and sample.mbox with Python's email and mailbox
modules (called by make.sh; needs only python3).  sample.eml: a
multipart/alternative message (plain and HTML) with two attachments, the
PDF of this folder and a text file; sample.mbox: three messages, the
second in ISO-8859-1 with an attached zip of one text file, the third
forwarding sample.eml as an attached message."""
import io, mailbox, os, sys, zipfile
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import format_datetime
from datetime import datetime, timezone

here = os.path.dirname(os.path.abspath(__file__))
SENTENCE = "The quick sluice gate opens at dawn and closes at dusk."

def sample_eml():
    m = EmailMessage()
    m["From"] = "Ada Lovelace <ada@example.org>"
    m["To"] = "Charles Babbage <charles@example.org>"
    m["Subject"] = "Sluice Sample Report"
    m["Date"] = format_datetime(datetime(2024, 3, 15, 10, 0, tzinfo=timezone.utc))
    m["Message-ID"] = "<sample-1@example.org>"
    m.set_content("Harbour Survey\n\n" + SENTENCE +
                  "\nHerons gather near the northern pier when the tide turns.\n")
    m.add_alternative("<html><body><h1>Harbour Survey</h1><p>" + SENTENCE +
                      "</p><p>Herons gather near the northern pier when the tide "
                      "turns.</p></body></html>", subtype="html")
    with open(os.path.join(here, "sample.pdf"), "rb") as f:
        m.add_attachment(f.read(), maintype="application", subtype="pdf",
                         filename="report.pdf")
    m.add_attachment("Tide table notes: kestrel moored at pier four.\n",
                     filename="notes.txt")
    return m

def mbox_messages(eml):
    one = EmailMessage()
    one["From"] = "Harbour Master <master@example.org>"
    one["To"] = "crew@example.org"
    one["Subject"] = "Gate schedule"
    one["Date"] = format_datetime(datetime(2024, 3, 1, 8, 30, tzinfo=timezone.utc))
    one.set_content("The gate schedule is unchanged this week.\n")
    two = EmailMessage()
    two["From"] = "Björn <bjorn@example.org>"
    two["To"] = "crew@example.org"
    two["Subject"] = "Café crème"
    two["Date"] = format_datetime(datetime(2024, 3, 2, 9, 0, tzinfo=timezone.utc))
    two.set_content("Der Kaffee im Café am Hafen ist heiß; naïve façade.\n",
                    charset="iso-8859-1")
    z = io.BytesIO()
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("manifest.txt", "Cargo manifest: osprey carries salt.\n")
    two.add_attachment(z.getvalue(), maintype="application", subtype="zip",
                       filename="manifest.zip")
    three = EmailMessage()
    three["From"] = "Charles Babbage <charles@example.org>"
    three["To"] = "crew@example.org"
    three["Subject"] = "Fwd: Sluice Sample Report"
    three["Date"] = format_datetime(datetime(2024, 3, 16, 12, 0, tzinfo=timezone.utc))
    three.set_content("Forwarding Ada's report.\n")
    three.add_attachment(eml)
    return [one, two, three]

eml = sample_eml()
with open(os.path.join(here, "sample.eml"), "wb") as f:
    f.write(eml.as_bytes(policy=SMTP))
path = os.path.join(here, "sample.mbox")
if os.path.exists(path):
    os.unlink(path)
box = mailbox.mbox(path, create=True)
for m in mbox_messages(eml):
    box.add(m)
box.flush()
box.close()
