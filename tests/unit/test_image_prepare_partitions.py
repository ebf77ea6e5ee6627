"""Finding an image's root filesystem from its bytes (dataplane/images/partitions.py):
GPT and MBR tables built here byte by byte, and bare superblocks."""

from __future__ import annotations

import struct
import uuid
import zlib

import pytest

from stackling.dataplane.images.errors import Refused
from stackling.dataplane.images.partitions import LINUX_DATA, ROOT_X86_64, filesystem, find_root, gpt, mbr

MiB = 1 << 20
EFI = "C12A7328-F81F-11D2-BA4B-00A0C93EC93B"
BIOS = "21686148-6449-6E6F-744E-656564454649"


class Disk:
    """A sparse disk in memory: written ranges over zeros."""

    def __init__(self, size: int) -> None:
        self.size, self.chunks = size, {}

    def write(self, offset: int, data: bytes) -> None:
        self.chunks[offset] = data

    def read(self, offset: int, length: int) -> bytes:
        length = max(0, min(length, self.size - offset))
        out = bytearray(length)
        for start, data in self.chunks.items():
            lo, hi = max(start, offset), min(start + len(data), offset + length)
            if lo < hi:
                out[lo - offset:hi - offset] = data[lo - start:hi - start]
        return bytes(out)


def ext4_at(disk: Disk, offset: int) -> None:
    sb = bytearray(128)
    sb[24:28] = struct.pack("<I", 2)  # 4 KiB blocks
    sb[56:58] = b"\x53\xef"
    disk.write(offset + 1024, bytes(sb))


def gpt_disk(parts: list[tuple[str, int, int]], size: int = 64 * MiB,
             sector: int = 512) -> Disk:
    """`parts`: (type GUID, start MiB, size MiB)."""
    disk = Disk(size)
    entries = bytearray(128 * 128)
    for i, (kind, start, length) in enumerate(parts):
        first, last = start * MiB // sector, (start + length) * MiB // sector - 1
        entries[i * 128:i * 128 + 56] = (uuid.UUID(kind).bytes_le + uuid.uuid4().bytes_le
                                         + struct.pack("<QQQ", first, last, 0))
    header = bytearray(92)
    header[:8] = b"EFI PART"
    struct.pack_into("<IIII", header, 8, 0x10000, 92, 0, 0)
    struct.pack_into("<QQQQ", header, 24, 1, size // sector - 1, 34, size // sector - 34)
    header[56:72] = uuid.uuid4().bytes_le
    struct.pack_into("<QIII", header, 72, 2, 128, 128, zlib.crc32(entries))
    struct.pack_into("<I", header, 16, zlib.crc32(bytes(header)))
    protective = bytearray(512)
    protective[446 + 4] = 0xEE
    struct.pack_into("<II", protective, 446 + 8, 1, size // 512 - 1)
    protective[510:512] = b"\x55\xaa"
    disk.write(0, bytes(protective))
    disk.write(sector, bytes(header))
    disk.write(2 * sector, bytes(entries))
    return disk


def mbr_disk(parts: list[tuple[int, int, int]], size: int = 64 * MiB) -> Disk:
    disk = Disk(size)
    sector = bytearray(512)
    for i, (kind, start, length) in enumerate(parts):
        sector[446 + 16 * i + 4] = kind
        struct.pack_into("<II", sector, 446 + 16 * i + 8, start * MiB // 512, length * MiB // 512)
    sector[510:512] = b"\x55\xaa"
    disk.write(0, bytes(sector))
    return disk


def test_gpt_root_type_wins_over_a_larger_linux_partition() -> None:
    disk = gpt_disk([(BIOS, 1, 1), (LINUX_DATA, 2, 40), (ROOT_X86_64, 42, 10)])
    ext4_at(disk, 2 * MiB)
    ext4_at(disk, 42 * MiB)
    root = find_root(disk.read, disk.size)
    assert (root.offset, root.size, root.fstype) == (42 * MiB, 10 * MiB, "ext4")
    assert root.where == "partition 3 of its GPT"


def test_gpt_largest_linux_filesystem_as_ubuntu_lays_it_out() -> None:
    # Ubuntu: 1 root (Linux filesystem), 14 BIOS boot, 15 EFI; a small /boot beside it
    disk = gpt_disk([(LINUX_DATA, 10, 50), (BIOS, 1, 1), (EFI, 2, 4), (LINUX_DATA, 6, 4)])
    ext4_at(disk, 10 * MiB)
    ext4_at(disk, 6 * MiB)
    assert find_root(disk.read, disk.size).offset == 10 * MiB
    assert [p.number for p in gpt(disk.read)] == [1, 2, 3, 4]


def test_gpt_with_4k_sectors() -> None:
    disk = gpt_disk([(ROOT_X86_64, 1, 20)], sector=4096)
    ext4_at(disk, 1 * MiB)
    assert find_root(disk.read, disk.size).offset == 1 * MiB


def test_gpt_without_a_linux_partition() -> None:
    disk = gpt_disk([(EFI, 1, 10)])
    with pytest.raises(Refused, match="^has no root filesystem: no Linux partition in its GPT$"):
        find_root(disk.read, disk.size)


def test_gpt_linux_partition_without_a_filesystem() -> None:
    disk = gpt_disk([(LINUX_DATA, 1, 10)])
    with pytest.raises(Refused, match="partition 1 is no filesystem this cloud knows"):
        find_root(disk.read, disk.size)


def test_gpt_corrupt_crc_and_partition_past_the_end() -> None:
    disk = gpt_disk([(LINUX_DATA, 1, 10)])
    disk.write(512 + 40, b"\x01")  # a byte of the header changed: its CRC no longer matches
    with pytest.raises(Refused, match="corrupt GPT"):
        find_root(disk.read, disk.size)
    disk = gpt_disk([(LINUX_DATA, 1, 100)], size=64 * MiB)
    with pytest.raises(Refused, match="partition 1 ends past the end"):
        find_root(disk.read, disk.size)


def test_mbr_largest_linux_partition_and_logical_ones() -> None:
    disk = mbr_disk([(0x0C, 1, 4), (0x83, 5, 8), (0x83, 13, 30)])
    ext4_at(disk, 5 * MiB)
    ext4_at(disk, 13 * MiB)
    root = find_root(disk.read, disk.size)
    assert (root.offset, root.where) == (13 * MiB, "partition 3 of its MBR")
    # an extended partition holding one logical Linux partition (number 5)
    disk = mbr_disk([(0x05, 1, 40)])
    ebr = bytearray(512)
    ebr[446 + 4] = 0x83
    struct.pack_into("<II", ebr, 446 + 8, 2048, 20 * MiB // 512)
    ebr[510:512] = b"\x55\xaa"
    disk.write(1 * MiB, bytes(ebr))
    ext4_at(disk, 2 * MiB)
    parts = mbr(disk.read, disk.size)
    assert [(p.number, p.start) for p in parts] == [(5, 2 * MiB)]
    assert find_root(disk.read, disk.size).where == "partition 5 of its MBR"


def test_mbr_without_linux() -> None:
    disk = mbr_disk([(0x07, 1, 10)])
    with pytest.raises(Refused, match="no Linux partition in its MBR"):
        find_root(disk.read, disk.size)


@pytest.mark.parametrize(("at", "magic", "fstype"), [
    (0, b"XFSB", "xfs"), (0, b"hsqs", "squashfs"), (1024, b"\xe2\xe1\xf5\xe0", "erofs"),
    (0x10040, b"_BHRfS_M", "btrfs"), (0, b"LUKS\xba\xbe", "luks")])
def test_bare_filesystems_by_magic(at: int, magic: bytes, fstype: str) -> None:
    disk = Disk(8 * MiB)
    disk.write(at, magic)
    assert filesystem(disk.read, 0) == fstype
    if fstype == "luks":
        with pytest.raises(Refused, match="it is luks, not a filesystem"):
            find_root(disk.read, disk.size)
    else:
        root = find_root(disk.read, disk.size)
        assert (root.offset, root.size, root.fstype) == (0, 8 * MiB, fstype)
        assert root.where == f"a bare {fstype} filesystem"


def test_bare_ext4_and_nothing_at_all() -> None:
    disk = Disk(8 * MiB)
    ext4_at(disk, 0)
    assert find_root(disk.read, disk.size).where == "a bare ext4 filesystem"
    with pytest.raises(Refused, match="no partition table .* and no filesystem"):
        find_root(Disk(8 * MiB).read, 8 * MiB)
