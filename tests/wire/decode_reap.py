#!/usr/bin/env python3
"""An independent decoder of reap's replication records, written from proto/reap.proto's
"Record layouts" alone (no C code shared). The envelope is decoded with python3-protobuf from
the descriptor set protoc-c writes at build time; ActorSpawn.records and ActorUpdate.records are
decoded here byte by byte.

usage: decode_reap.py DESCRIPTOR_SET PACKET_DIR [--expect FILE]

PACKET_DIR holds one file per received ENet packet (any name ending in .bin, read in name
order). Prints every record; with --expect, compares with FILE's lines
  spawn NET_ID INDEX CLASS OWNER SLOT QX QY QZ  (every actor the client must have been spawned;
                                               SLOT 0: not a moving actor)
  last  NET_ID QX QY QZ                         (the position the last update of that actor,
                                               found by its mover slot, carries)
and exits 1 on any difference, 2 on a malformed packet.
"""
import os
import sys

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory


def load_envelope_class(desc_path):
    fds = descriptor_pb2.FileDescriptorSet()
    with open(desc_path, "rb") as f:
        fds.ParseFromString(f.read())
    pool = descriptor_pool.DescriptorPool()
    for fd in fds.file:
        pool.Add(fd)
    desc = pool.FindMessageTypeByName("reap.Envelope")
    if hasattr(message_factory, "GetMessageClass"):
        return message_factory.GetMessageClass(desc)
    return message_factory.MessageFactory(pool).GetPrototype(desc)


class Malformed(Exception):
    pass


class Reader:
    def __init__(self, data):
        self.data = data
        self.pos = 0

    def byte(self):
        if self.pos >= len(self.data):
            raise Malformed("record ends early")
        b = self.data[self.pos]
        self.pos += 1
        return b

    def varint(self):
        value, shift = 0, 0
        while True:
            b = self.byte()
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7
            if shift >= 64:
                raise Malformed("varint longer than 10 bytes")

    def zigzag(self):
        v = self.varint()
        return (v >> 1) ^ -(v & 1)

    def pos24(self):
        b0, b1, b2 = self.byte(), self.byte(), self.byte()
        v = b0 | (b1 << 8) | (b2 << 16)
        return v - (1 << 24) if v & 0x800000 else v

    def done(self):
        return self.pos == len(self.data)


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


def main(argv):
    if len(argv) not in (3, 5) or (len(argv) == 5 and argv[3] != "--expect"):
        sys.stderr.write(__doc__)
        return 2
    envelope = load_envelope_class(argv[1])
    spawns, last, by_slot = {}, {}, {}
    names = sorted(n for n in os.listdir(argv[2]) if n.endswith(".bin"))
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


if __name__ == "__main__":
    sys.exit(main(sys.argv))
