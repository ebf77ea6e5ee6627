"""Where a raw image's root filesystem is: its partition table (GPT or MBR) read from the
bytes, the root partition chosen as cloud images lay it out, or a bare filesystem known by
its superblock's magic. Pure: reads through a `read(offset, length)` callable."""

from __future__ import annotations

import struct
import uuid
import zlib
from collections.abc import Callable
from dataclasses import dataclass

from stackling.dataplane.images.errors import Refused

Read = Callable[[int, int], bytes]

# systemd's discoverable partitions: an x86-64 root; else the largest Linux filesystem data
# partition holds the root (Ubuntu's, CentOS's and Debian's cloud images lay it out so).
ROOT_X86_64 = "4F68BCE3-E8CD-4DB1-96E7-FBCAF984B709"
LINUX_DATA = "0FC63DAF-8483-4772-8E79-3D69D8477DE4"
MBR_LINUX = 0x83
MBR_EXTENDED = (0x05, 0x0F, 0x85)
MBR_GPT = 0xEE
# The filesystems a root may be, by the mount type the kernel knows them as.
MOUNTABLE = ("ext4", "xfs", "btrfs", "squashfs", "erofs")


@dataclass(frozen=True)
class Partition:
    number: int
    start: int  # bytes from the start of the disk
    size: int  # bytes
    type: str  # a GPT type GUID (upper case) or an MBR type ("0x83")


@dataclass(frozen=True)
class Volume:
    """The root filesystem: its place in the image file and its type."""

    offset: int
    size: int
    fstype: str  # one of MOUNTABLE
    where: str  # for a reader: "partition 1 of its GPT", "a bare filesystem"


def filesystem(read: Read, offset: int) -> str | None:
    """The filesystem whose superblock starts at `offset`, by its magic, or None. ext2 and
    ext3 are "ext4" (the kernel's ext4 mounts them); LUKS and LVM are named to be refused."""
    ext = read(offset + 1024, 128)
    if len(ext) >= 100 and ext[56:58] == b"\x53\xef":
        log_block_size, = struct.unpack_from("<I", ext, 24)
        incompat, = struct.unpack_from("<I", ext, 96)
        if log_block_size <= 6 and not incompat & 0x8:  # not an external journal device
            return "ext4"
    head = read(offset, 8)
    if head[:4] == b"XFSB":
        return "xfs"
    if head[:4] == b"hsqs":
        return "squashfs"
    if head[:6] == b"LUKS\xba\xbe":
        return "luks"
    if read(offset + 1024, 4) == b"\xe2\xe1\xf5\xe0":
        return "erofs"
    if read(offset + 0x10040, 8) == b"_BHRfS_M":
        return "btrfs"
    if read(offset + 512, 8) == b"LABELONE" or read(offset + 536, 8) == b"LVM2 001":
        return "lvm"
    return None


def gpt(read: Read) -> list[Partition] | None:
    """The GPT's partitions (its header at LBA 1, sectors of 512 or 4096 bytes), or None
    when there is none. A header or entry array whose CRC does not match is refused."""
    for sector in (512, 4096):
        header = read(sector, 92)
        if header[:8] == b"EFI PART":
            break
    else:
        return None
    header_size, header_crc = struct.unpack_from("<II", header, 12)
    if not 92 <= header_size <= sector:
        raise Refused("has a corrupt GPT: bad header size")
    header = read(sector, header_size)
    if zlib.crc32(header[:16] + b"\0\0\0\0" + header[20:]) != header_crc:
        raise Refused("has a corrupt GPT: its header's CRC does not match")
    entries_lba, count, entry_size, entries_crc = struct.unpack_from("<QIII", header, 72)
    if entry_size < 128 or entry_size % 8 or count * entry_size > 1 << 20:
        raise Refused("has a corrupt GPT: bad partition entry array")
    table = read(entries_lba * sector, count * entry_size)
    if len(table) != count * entry_size or zlib.crc32(table) != entries_crc:
        raise Refused("has a corrupt GPT: its partition entries' CRC does not match")
    parts = []
    for i in range(count):
        entry = table[i * entry_size:(i + 1) * entry_size]
        type_guid = uuid.UUID(bytes_le=entry[:16])
        if type_guid.int == 0:
            continue  # unused entry
        first, last = struct.unpack_from("<QQ", entry, 32)
        if last < first:
            raise Refused(f"has a corrupt GPT: partition {i + 1} ends before it starts")
        parts.append(Partition(i + 1, first * sector, (last - first + 1) * sector,
                               str(type_guid).upper()))
    return parts


def mbr(read: Read, disk_size: int) -> list[Partition] | None:
    """The MBR's partitions (logical ones of an extended partition numbered from 5), or
    None when the first sector is no MBR (no signature, or entries beyond the disk)."""
    sector = read(0, 512)
    if len(sector) < 512 or sector[510:512] != b"\x55\xaa":
        return None
    parts: list[Partition] = []
    extended: Partition | None = None
    for i in range(4):
        kind, start, count = _mbr_entry(sector, i)
        if kind == 0 or count == 0:
            continue
        if start + count > disk_size // 512 or start == 0:
            return None  # not a partition table (a filesystem's boot sector, say)
        part = Partition(i + 1, start * 512, count * 512, f"0x{kind:02x}")
        if kind in MBR_EXTENDED:
            extended = part
        else:
            parts.append(part)
    if extended is not None:
        parts += _logical(read, extended, disk_size)
    return parts


def _mbr_entry(sector: bytes, i: int) -> tuple[int, int, int]:
    kind = sector[446 + 16 * i + 4]
    start, count = struct.unpack_from("<II", sector, 446 + 16 * i + 8)
    return kind, start, count


def _logical(read: Read, extended: Partition, disk_size: int) -> list[Partition]:
    """The chain of extended boot records (bounded: a loop in it ends it)."""
    base, ebr, out = extended.start, extended.start, []
    for number in range(5, 5 + 128):
        sector = read(ebr, 512)
        if len(sector) < 512 or sector[510:512] != b"\x55\xaa":
            break
        kind, start, count = _mbr_entry(sector, 0)
        if kind and count and ebr + (start + count) * 512 <= disk_size:
            out.append(Partition(number, ebr + start * 512, count * 512, f"0x{kind:02x}"))
        kind, start, _ = _mbr_entry(sector, 1)
        if kind not in MBR_EXTENDED or start == 0 or base + start * 512 <= ebr:
            break
        ebr = base + start * 512
    return out


def find_root(read: Read, disk_size: int) -> Volume:
    """The image's root filesystem (Refused when it has none this cloud can mount)."""
    parts, label = gpt(read), "GPT"
    if parts is None:
        fstype = filesystem(read, 0)
        if fstype in MOUNTABLE:
            return Volume(0, disk_size, fstype, f"a bare {fstype} filesystem")
        if fstype is not None:
            raise Refused(f"has no root filesystem: it is {fstype}, not a filesystem")
        parts, label = mbr(read, disk_size), "MBR"
    if parts is None:
        raise Refused("has no root filesystem: no partition table (GPT or MBR) and no "
                      "filesystem this cloud knows (ext4, xfs, btrfs, squashfs, erofs)")
    for part in parts:
        if part.start + part.size > disk_size:
            raise Refused(f"has a corrupt {label}: partition {part.number} ends past the "
                          "end of the disk")
    candidates = [p for p in parts if p.type == ROOT_X86_64]
    if not candidates:
        linux = LINUX_DATA if label == "GPT" else f"0x{MBR_LINUX:02x}"
        candidates = sorted((p for p in parts if p.type == linux), key=lambda p: -p.size)
    if not candidates:
        raise Refused(f"has no root filesystem: no Linux partition in its {label}")
    found = []
    for part in candidates:
        fstype = filesystem(read, part.start)
        if fstype in MOUNTABLE:
            return Volume(part.start, part.size, fstype, f"partition {part.number} of its {label}")
        found.append(f"partition {part.number} is {fstype or 'no filesystem this cloud knows'}")
    raise Refused(f"has no root filesystem: {'; '.join(found)} (in its {label})")
