#!/usr/bin/python3
"""An independent decoder of reap's wire protocol, written from proto/reap.proto and the
README's "Wire protocol" section alone (no C code shared). Field names, numbers and types come
from the descriptor set protoc-c writes from reap.proto at build time; everything else (the
protobuf wire format, the packed records of ActorSpawn and ActorUpdate, splitmix64) is decoded
here byte by byte, as a client in another language would.

usage:
  decode_reap.py DESCRIPTOR_SET PACKET_DIR [--expect FILE]
  decode_reap.py DESCRIPTOR_SET --examples README [--capture DIR]

PACKET_DIR holds one file per received ENet packet (any name ending in .bin, read in name
order). Prints every record; with --expect, compares with FILE's lines
  spawn NET_ID INDEX CLASS OWNER SLOT QX QY QZ  (every actor the client must have been spawned;
                                               SLOT 0: not a moving actor)
  last  NET_ID QX QY QZ                         (the position the last update of that actor,
                                               found by its mover slot, carries)
and exits 1 on any difference, 2 on a malformed packet.

--examples reads the README's appendix "Wire examples": each `<!-- wire: NAME -->` region's
hex must decode to the table beside it, the splitmix64 vectors must be what the definition
gives, and with --capture (a folder tests/wire/wire_capture filled from a real server) each
example must be what the server sent: byte for byte, except for what the README says varies
from run to run (frame numbers, the coordinates of what moves, and the lengths around them).
Exits 1 on any difference.
"""
import os
import re
import struct
import sys

from google.protobuf import descriptor, descriptor_pb2, descriptor_pool, message_factory

F = descriptor.FieldDescriptor
MASK64 = (1 << 64) - 1


def load_pool(desc_path):
    fds = descriptor_pb2.FileDescriptorSet()
    with open(desc_path, "rb") as f:
        fds.ParseFromString(f.read())
    pool = descriptor_pool.DescriptorPool()
    for fd in fds.file:
        pool.Add(fd)
    return pool


def message_class(desc):
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(desc)
    return message_factory.MessageFactory(desc.file.pool).GetPrototype(desc)


def load_envelope_class(desc_path):
    return message_class(load_pool(desc_path).FindMessageTypeByName("reap.Envelope"))


class Malformed(Exception):
    pass


class Reader:
    def __init__(self, data, pos=0, end=None):
        self.data = data
        self.pos = pos
        self.end = len(data) if end is None else end

    def byte(self):
        if self.pos >= self.end:
            raise Malformed("record ends early")
        b = self.data[self.pos]
        self.pos += 1
        return b

    def take(self, n):
        if self.pos + n > self.end:
            raise Malformed("%d bytes wanted, %d left" % (n, self.end - self.pos))
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def varint(self):
        value, shift = 0, 0
        while True:
            b = self.byte()
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7
            if shift >= 70:
                raise Malformed("varint longer than 10 bytes")

    def zigzag(self):
        return unzigzag(self.varint())

    def pos24(self):
        b0, b1, b2 = self.byte(), self.byte(), self.byte()
        v = b0 | (b1 << 8) | (b2 << 16)
        return v - (1 << 24) if v & 0x800000 else v

    def done(self):
        return self.pos == self.end


def unzigzag(v):
    return (v >> 1) ^ -(v & 1)


def splitmix64(x):
    """The README's definition: the increment is added once, before mixing."""
    z = (x + 0x9E3779B97F4A7C15) & MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def digest(net_ids):
    d = 0
    for n in net_ids:
        d ^= splitmix64(n)
    return d


def decode_spawns(records, count):
    r, out, net_id, index = Reader(records), [], 0, 0
    for _ in range(count):
        net_id += r.zigzag()
        index += r.zigzag()
        head = r.byte()
        if head & 0x80 or not head & 0x0F or head & 0x0F > 7:
            raise Malformed("spawn head 0x%02x" % head)
        archetype = r.varint() if head & 0x0F == 7 else 0
        if head & 0x0F == 7 and archetype == 0:
            raise Malformed("spawn names archetype 0")
        owner = r.varint() if head & 0x10 else 0
        slot = r.varint() if head & 0x40 else 0
        if head & 0x40 and slot == 0:
            raise Malformed("spawn names mover slot 0")
        qx, qy = r.pos24(), r.pos24()
        qz = r.pos24() if head & 0x20 else 0
        out.append((net_id, index, head & 0x0F, owner, slot, qx, qy, qz, archetype))
    if not r.done():
        raise Malformed("%d bytes left after %d spawn records" % (len(records) - r.pos, count))
    return out


def decode_updates(records, count):
    r, out, slot = Reader(records), [], 0
    for _ in range(count):
        head = r.varint()
        slot += (head >> 1) + 1
        qx, qy = r.pos24(), r.pos24()
        qz = r.pos24() if head & 1 else 0
        out.append((slot, qx, qy, qz))
    if not r.done():
        raise Malformed("%d bytes left after %d update records" % (len(records) - r.pos, count))
    return out


# ---- explaining a packet byte by byte -----------------------------------------------------

class Row:
    """Some bytes of a packet and what they are. `varies`: a value that changes from run to
    run (a frame, a moving coordinate, or a length around one): compared by field only."""

    def __init__(self, data, start, end, field, value, varies=False):
        self.hex = " ".join("%02x" % b for b in data[start:end])
        self.field = field
        self.value = value
        self.varies = varies

    def cells(self):
        shown = self.hex if len(self.hex) <= 3 * 12 else self.hex[:3 * 12 - 1] + " ..."
        return "| `%s` | %s | %s |" % (shown, self.field, self.value)


def enum_name(field, v):
    ev = field.enum_type.values_by_number.get(v)
    return "%d (%s)" % (v, ev.name) if ev else "%d (unknown)" % v


def scalar(field, wire_type, raw):
    """The value of a scalar field as the README shows it."""
    if wire_type == 0:
        if field is None:
            return "%d" % raw
        if field.type == F.TYPE_ENUM:
            return enum_name(field, raw)
        if field.type == F.TYPE_BOOL:
            return "%d (%s)" % (raw, "true" if raw else "false")
        if field.type in (F.TYPE_SINT32, F.TYPE_SINT64):
            return "%d" % unzigzag(raw)
        if raw > 0xFFFFFFFF:
            return "%d (0x%016x)" % (raw, raw)
        return "%d" % raw
    if wire_type == 5:
        if field is not None and field.type == F.TYPE_FLOAT:
            v = struct.unpack("<f", raw)[0]
            return "%.9g (float 0x%08x)" % (v, struct.unpack("<I", raw)[0])
        return "%d" % struct.unpack("<I", raw)[0]
    if field is not None and field.type == F.TYPE_DOUBLE:
        return repr(struct.unpack("<d", raw)[0])
    return "%d" % struct.unpack("<Q", raw)[0]


def explain_spawn_records(data, r, count, prefix, rows):
    net_id = index = 0
    for i in range(count):
        p = "%s[%d]." % (prefix, i)
        start = r.pos
        d = r.zigzag()
        net_id += d
        rows.append(Row(data, start, r.pos, p + "net_id", "%+d: %d" % (d, net_id)))
        start = r.pos
        d = r.zigzag()
        index += d
        rows.append(Row(data, start, r.pos, p + "index", "%+d: %d" % (d, index)))
        start = r.pos
        head = r.byte()
        cls = head & 0x0F
        if head & 0x80 or not cls or cls > 7:
            raise Malformed("spawn head 0x%02x" % head)
        what = ["class %d" % cls] + [w for bit, w in ((0x10, "owner"), (0x20, "z"),
                                                      (0x40, "mover slot")) if head & bit]
        rows.append(Row(data, start, r.pos, p + "head", ", ".join(what)))
        for bit, name in ((-1, "archetype"), (0x10, "owner_player_id"), (0x40, "mover_slot")):
            if (bit == -1 and cls == 7) or (bit > 0 and head & bit):
                start = r.pos
                v = r.varint()
                if v == 0 and name != "owner_player_id":
                    raise Malformed("spawn names %s 0" % name)
                rows.append(Row(data, start, r.pos, p + name, "%d" % v))
        for axis in "xyz":
            if axis == "z" and not head & 0x20:
                continue
            start = r.pos
            q = r.pos24()
            rows.append(Row(data, start, r.pos, p + axis, "%d steps" % q, varies=True))


def explain_update_records(data, r, count, prefix, rows):
    slot = 0
    for i in range(count):
        p = "%s[%d]." % (prefix, i)
        start = r.pos
        head = r.varint()
        slot += (head >> 1) + 1
        rows.append(Row(data, start, r.pos, p + "mover_slot",
                        "%d (+%d), %s" % (slot, (head >> 1) + 1, "z" if head & 1 else "no z")))
        for axis in "xyz" if head & 1 else "xy":
            start = r.pos
            q = r.pos24()
            rows.append(Row(data, start, r.pos, p + axis, "%d steps" % q, varies=True))


def explain_message(data, r, desc, prefix, rows, varies=False):
    seen, counts = {}, {}
    while not r.done():
        start = r.pos
        key = r.varint()
        number, wire_type = key >> 3, key & 7
        field = desc.fields_by_number.get(number)
        name = field.name if field is not None else "field %d" % number
        repeated = field is not None and field.label == F.LABEL_REPEATED
        packed = repeated and wire_type == 2 and field.type not in (
            F.TYPE_MESSAGE, F.TYPE_STRING, F.TYPE_BYTES)
        if repeated and not packed:
            name += "[%d]" % counts.get(number, 0)
            counts[number] = counts.get(number, 0) + 1
        full = prefix + name
        if wire_type in (0, 1, 5):
            raw = r.varint() if wire_type == 0 else r.take(8 if wire_type == 1 else 4)
            seen[name] = raw
            frame = name == "frame" and desc.name in ("ActorSpawn", "ActorUpdate", "Travel")
            rows.append(Row(data, start, r.pos, full, scalar(field, wire_type, raw),
                            varies=varies or frame))
            continue
        if wire_type != 2:
            raise Malformed("wire type %d (a group) at byte %d" % (wire_type, start))
        n = r.varint()
        head_end = r.pos
        body = Reader(data, head_end, head_end + n)
        if body.end > len(data):
            raise Malformed("%s overruns the packet" % full)
        r.pos = body.end
        if field is None:
            rows.append(Row(data, start, body.end, full, "%d bytes, unknown" % n))
        elif field.type == F.TYPE_MESSAGE:
            moving = field.message_type.name in ("ActorSpawn", "ActorUpdate", "Travel")
            rows.append(Row(data, start, head_end, full, "%s, %d bytes:" %
                            (field.message_type.name, n), varies=moving))
            explain_message(data, body, field.message_type, full + ".", rows)
        elif field.type == F.TYPE_STRING:
            text = data[head_end:body.end].decode("utf-8")
            rows.append(Row(data, start, body.end, full, '"%s"' % text.replace("|", "\\|")))
        elif packed:
            rows.append(Row(data, start, head_end, full, "packed, %d byte%s:" %
                            (n, "" if n == 1 else "s")))
            i = 0
            while not body.done():
                s0 = body.pos
                if field.type in (F.TYPE_FIXED64, F.TYPE_DOUBLE):
                    v = struct.unpack("<Q", body.take(8))[0]
                else:
                    v = body.varint()
                rows.append(Row(data, s0, body.pos, "%s[%d]" % (full, i), "%d" % v))
                i += 1
        elif name == "records" and desc.name in ("ActorSpawn", "ActorUpdate"):
            count = seen.get("count", 0)
            rows.append(Row(data, start, head_end, full, "%d bytes, %d records:" % (n, count),
                            varies=True))
            if desc.name == "ActorSpawn":
                explain_spawn_records(data, body, count, full, rows)
            else:
                explain_update_records(data, body, count, full, rows)
            if not body.done():
                raise Malformed("%d bytes left after %d records" % (body.end - body.pos, count))
        else:
            rows.append(Row(data, start, body.end, full, "%d bytes" % n))


def explain(data, envelope_desc):
    """Rows covering every byte of one packet (an Envelope), in order."""
    rows = []
    explain_message(data, Reader(data), envelope_desc, "", rows)
    return rows


def body_of(data, envelope_desc):
    """(body field name, seq) of a packet, decoded by hand."""
    r, body, seq = Reader(data), None, 0
    while not r.done():
        key = r.varint()
        number, wire_type = key >> 3, key & 7
        if wire_type == 0:
            v = r.varint()
            if number == 1:
                seq = v
        elif wire_type == 2:
            n = r.varint()
            r.take(n)
            field = envelope_desc.fields_by_number.get(number)
            if field is not None and field.containing_oneof is not None:
                body = field.name
        elif wire_type in (1, 5):
            r.take(8 if wire_type == 1 else 4)
        else:
            raise Malformed("wire type %d (a group)" % wire_type)
    return body, seq


# ---- the README's examples -----------------------------------------------------------------

def body_name(rows):
    """The envelope's body field of a packet's rows (None without one)."""
    return next((r.field for r in rows if r.field != "seq" and "." not in r.field), None)


def heads(rows):
    return [r.value for r in rows if r.field.endswith("].head")]


# What each example is, and how to find it among a capture's packets (tests/wire/wire_capture.c
# plays the session): (title, who received it, test on the explained rows).
EXAMPLES = {
    "welcome": ("ada's Welcome (the answer to her Hello, seq 1)", "ada",
                lambda rows: body_name(rows) == "welcome"),
    "spawn": ("the ActorSpawn of her 3 props", "ada",
              lambda rows: body_name(rows) == "actor_spawn" and len(heads(rows)) == 3 and
              all(h.startswith("class 6,") for h in heads(rows))),
    "update": ("an ActorUpdate of her pawn and bob's", "ada",
               lambda rows: body_name(rows) == "actor_update" and
               sum(1 for r in rows if r.field.endswith("].mover_slot")) == 2),
    "destroy": ("the ActorDestroy of her first prop", "ada",
                lambda rows: body_name(rows) == "actor_destroy"),
    "error": ("the Error refusing her spawn of 0 props (seq 4)", "ada",
              lambda rows: body_name(rows) == "error"),
    "refusal": ("the Error refusing cy's Hello of the previous protocol version", "cy",
                lambda rows: body_name(rows) == "error"),
    "check": ("the ReplicationCheck answering her request (seq 5)", "ada",
              lambda rows: body_name(rows) == "replication_check"),
    "travel": ("the Travel telling her the server travels seamlessly (DEPART)", "ada",
               lambda rows: body_name(rows) == "travel" and
               any(r.field == "travel.phase" and r.value.startswith("1 ") for r in rows)),
    "arrive": ("the Travel of her arrival, with the new world's Welcome (ARRIVE)", "ada",
               lambda rows: body_name(rows) == "travel" and
               any(r.field == "travel.phase" and r.value.startswith("2 ") for r in rows)),
}
SPLITMIX_VECTORS = [0, 1, 2, 3, 4, 6, 8, 9, 0x5EEDF00D, MASK64]


def capture_packets(capture, who):
    """(name, channel, bytes) of every packet `who` received, in order."""
    folder = os.path.join(capture, who)
    out = []
    for name in sorted(n for n in os.listdir(folder) if n.endswith(".bin")):
        m = re.match(r"\d+-ch(\d)\.bin$", name)
        with open(os.path.join(folder, name), "rb") as f:
            out.append((name, int(m.group(1)) if m else -1, f.read()))
    return out


def held_before(envelope_desc, packets, stop):
    """Net ids the client holds after the packets before index `stop` (spawns less destroys)."""
    env_class = message_class(envelope_desc)
    held = set()
    for name, _, data in packets[:stop]:
        body, _ = body_of(data, envelope_desc)
        if body not in ("actor_spawn", "actor_destroy"):
            continue
        env = env_class()
        env.ParseFromString(data)
        if body == "actor_spawn":
            for rec in decode_spawns(env.actor_spawn.records, env.actor_spawn.count):
                held.add(rec[0])
        else:
            held.difference_update(env.actor_destroy.net_ids)
    return sorted(held)


def find_example(envelope_desc, capture, name):
    """(channel, bytes, held net ids before it) of the example in a capture, or None."""
    title, who, test = EXAMPLES[name]
    packets = capture_packets(capture, who)
    for i, (_, channel, data) in enumerate(packets):
        if test(explain(data, envelope_desc)):
            return channel, data, held_before(envelope_desc, packets, i)
    return None


def hex_lines(data):
    return [" ".join("%02x" % b for b in data[i:i + 16]) for i in range(0, len(data), 16)]


def render(envelope_desc, name, channel, data, held):
    """The lines of an example's region, from its bytes."""
    title = EXAMPLES[name][0]
    lines = ["%s%s, channel %d, %d bytes:" % (title[0].upper(), title[1:], channel, len(data)),
             "", "```text"] + hex_lines(data) + ["```", "",
                                                 "| bytes | field | value |",
                                                 "| --- | --- | --- |"]
    lines += [r.cells() for r in explain(data, envelope_desc)]
    if name == "check":
        lines += ["", "The net ids ada holds then: %s; the XOR of their splitmix64 is 0x%016x." %
                  (", ".join("%d" % n for n in held), digest(held))]
    return lines


def render_splitmix():
    return ["| x | splitmix64(x) |", "| --- | --- |"] + [
        "| 0x%016x | 0x%016x |" % (x, splitmix64(x)) for x in SPLITMIX_VECTORS]


def regions(readme):
    """(name, first line, end line) of each `<!-- wire: NAME -->` ... `<!-- /wire -->`."""
    out = []
    for i, line in enumerate(readme):
        m = re.match(r"<!-- wire: ([a-z0-9-]+) -->$", line)
        if not m:
            continue
        end = i + 1
        while end < len(readme) and readme[end] != "<!-- /wire -->":
            end += 1
        if end == len(readme):
            raise SystemExit("README:%d: <!-- wire: %s --> has no <!-- /wire -->" % (i + 1,
                                                                                 m.group(1)))
        out.append((m.group(1), i + 1, end))
    return out


def parse_region(lines):
    """(channel, bytes) stated by an example region's text."""
    m = re.match(r".*, channel (\d), (\d+) bytes:$", lines[0])
    if not m:
        raise Malformed("the first line should end in ', channel C, N bytes:'")
    try:
        start = lines.index("```text") + 1
        end = lines.index("```", start)
    except ValueError:
        raise Malformed("no ```text block of hex")
    data = bytes(int(h, 16) for line in lines[start:end] for h in line.split())
    if len(data) != int(m.group(2)):
        raise Malformed("the text says %s bytes, the hex has %d" % (m.group(2), len(data)))
    return int(m.group(1)), data


def same_but_varying(envelope_desc, readme_data, real_data):
    """The first difference between two packets' rows, outside what varies; None if alike."""
    a, b = explain(readme_data, envelope_desc), explain(real_data, envelope_desc)
    if len(a) != len(b):
        return "%d rows against %d" % (len(a), len(b))
    for x, y in zip(a, b):
        if x.field != y.field or x.varies != y.varies:
            return "%s against %s" % (x.field, y.field)
        if not x.varies and (x.hex, x.value) != (y.hex, y.value):
            return "%s: %s (%s) against %s (%s)" % (x.field, x.value, x.hex, y.value, y.hex)
    return None


def check_examples(envelope_desc, readme, capture, out):
    """Checks every region; writes what is wrong to out; returns the number of problems."""
    bad = 0
    found = regions(readme)
    names = {n for n, _, _ in found}
    for want in list(EXAMPLES) + ["splitmix64"]:
        if want not in names:
            out.write("README: no <!-- wire: %s --> example\n" % want)
            bad += 1
    for name, first, end in found:
        lines = readme[first:end]
        if name == "splitmix64":
            if lines != render_splitmix():
                out.write("README:%d: the splitmix64 vectors are not what the definition "
                          "gives:\n%s\n" % (first, "\n".join(render_splitmix())))
                bad += 1
            continue
        if name not in EXAMPLES:
            out.write("README:%d: unknown example '%s'\n" % (first, name))
            bad += 1
            continue
        try:
            channel, data = parse_region(lines)
            held = []
            if name == "check":
                m = re.search(r"holds then: ([0-9, ]+);", "\n".join(lines))
                held = [int(x) for x in m.group(1).split(",")] if m else []
            rendered = render(envelope_desc, name, channel, data, held)
        except (Malformed, UnicodeDecodeError, ValueError) as e:
            out.write("README:%d: example '%s' does not decode: %s\n" % (first, name, e))
            bad += 1
            continue
        if rendered != lines:
            diff = next(i for i, (x, y) in enumerate(zip(rendered + [""], lines + [""]))
                        if x != y)
            out.write("README:%d: example '%s' says\n  %s\nwhere its bytes decode to\n  %s\n" %
                      (first + diff + 1, name, (lines + [""])[diff], (rendered + [""])[diff]))
            bad += 1
            continue
        if name == "check":
            rows = explain(data, envelope_desc)
            said = [r.value for r in rows if r.field.endswith("open_digest")]
            if not said or int(said[0].split()[0]) != digest(held):
                out.write("README:%d: open_digest is not the XOR of splitmix64 over the ids "
                          "listed\n" % first)
                bad += 1
        if capture is None:
            continue
        real = find_example(envelope_desc, capture, name)
        if real is None:
            out.write("capture: no packet of example '%s'\n" % name)
            bad += 1
            continue
        differs = same_but_varying(envelope_desc, data, real[1])
        if differs is None and real[0] != channel:
            differs = "channel %d against %d" % (channel, real[0])
        if differs is None and name == "check":
            rows = explain(real[1], envelope_desc)
            said = [int(r.value.split()[0]) for r in rows if r.field.endswith("_digest")]
            if real[2] != held or any(d != digest(real[2]) for d in said):
                differs = "the server's digests are not the XOR of splitmix64 over the net " \
                          "ids it sent (%s)" % real[2]
        if differs is not None:
            out.write("README:%d: example '%s' is not what the server sends: %s; a real run "
                      "sends:\n%s\n" % (first, name, differs,
                                        "\n".join(render(envelope_desc, name, *real))))
            bad += 1
    return bad


def write_examples(envelope_desc, readme, capture):
    """readme with every region written afresh from the capture."""
    for name, first, end in reversed(regions(readme)):
        if name == "splitmix64":
            readme[first:end] = render_splitmix()
            continue
        real = find_example(envelope_desc, capture, name)
        if real is None:
            raise SystemExit("capture: no packet of example '%s'" % name)
        readme[first:end] = render(envelope_desc, name, *real)
    return readme


# ---- packet folders ---------------------------------------------------------------------------

def decode_folder(argv):
    envelope = load_envelope_class(argv[1])
    spawns, last, by_slot = {}, {}, {}
    names = sorted(n for n in os.listdir(argv[2]) if n.endswith(".bin"))
    name = ""
    try:
        for name in names:
            env = envelope()
            with open(os.path.join(argv[2], name), "rb") as f:
                env.ParseFromString(f.read())
            body = env.WhichOneof("body")
            if body == "actor_spawn":
                for rec in decode_spawns(env.actor_spawn.records, env.actor_spawn.count):
                    print("spawn %d %d %d %d %d %d %d %d %d" % rec)
                    spawns[rec[0]] = rec
                    if rec[4]:
                        by_slot[rec[4]] = rec[0]
            elif body == "actor_destroy":
                for net_id in env.actor_destroy.net_ids:
                    by_slot = {k: v for k, v in by_slot.items() if v != net_id}
            elif body == "actor_update":
                for rec in decode_updates(env.actor_update.records, env.actor_update.count):
                    print("update %d %d %d %d" % rec)
                    if rec[0] not in by_slot:
                        raise Malformed("update of mover slot %d, which no spawn named" % rec[0])
                    last[by_slot[rec[0]]] = rec[1:]
    except Malformed as e:
        print("malformed packet %s: %s" % (name, e))
        return 2
    if len(argv) == 3:
        return 0
    bad = 0
    with open(argv[4]) as f:
        for line in f:
            w = line.split()
            if not w:
                continue
            if w[0] == "spawn":
                want = tuple(int(x) for x in w[1:])
                if spawns.get(want[0]) != want:
                    print("spawn of net id %d: got %s, want %s" % (want[0], spawns.get(want[0]), want))
                    bad += 1
            elif w[0] == "last":
                net_id, want = int(w[1]), tuple(int(x) for x in w[2:])
                if last.get(net_id) != want:
                    print("last update of net id %d: got %s, want %s"
                          % (net_id, last.get(net_id), want))
                    bad += 1
    print("decoded %d packets: %d spawns, %d actors updated, %d differences"
          % (len(names), len(spawns), len(last), bad))
    return 1 if bad else 0


def main(argv):
    if len(argv) >= 4 and argv[2] == "--examples":
        capture = None
        if len(argv) == 6 and argv[4] == "--capture":
            capture = argv[5]
        elif len(argv) != 4:
            sys.stderr.write(__doc__)
            return 2
        envelope_desc = load_pool(argv[1]).FindMessageTypeByName("reap.Envelope")
        with open(argv[3]) as f:
            readme = f.read().split("\n")
        bad = check_examples(envelope_desc, readme, capture, sys.stdout)
        if bad == 0:
            print("wire examples match%s" % (" a real server" if capture else " their text"))
        return 1 if bad else 0
    if len(argv) not in (3, 5) or (len(argv) == 5 and argv[3] != "--expect"):
        sys.stderr.write(__doc__)
        return 2
    return decode_folder(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
