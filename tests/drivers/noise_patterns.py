"""Line noise as it reaches a receiver, as hypothesis strategies: the patterns of issue 10 that
made the old link spin (framing bytes, STX / DLE / ETX floods, truncated frames, valid-looking
frames with a bad CRC) and uniform random bytes."""

from __future__ import annotations

from hypothesis import strategies as st

from drivers.framing import encode_frame

_frames = st.builds(
    lambda seq, cmd, payload: encode_frame(1, seq, cmd, payload, True),
    st.integers(1, 255),
    st.integers(0, 255),
    st.binary(max_size=12),
)


def _cut(frame: bytes, at: int) -> bytes:
    return frame[: 1 + at % (len(frame) - 2)]  # at least the STX, never the ETX


def _bad_crc(frame: bytes, flip: int) -> bytes:
    return frame[:-2] + bytes((frame[-2] ^ flip,)) + frame[-1:]


PATTERNS: dict[str, st.SearchStrategy[bytes]] = {
    "framing": st.lists(
        st.one_of(st.sampled_from([0x02, 0x03, 0x10]), st.integers(0, 255)),
        min_size=1,
        max_size=300,
    ).map(bytes),
    "stx_flood": st.integers(1, 300).map(lambda n: b"\x02" * n),
    "dle_flood": st.integers(1, 300).map(lambda n: b"\x10" * n),
    "etx_flood": st.integers(1, 300).map(lambda n: b"\x03" * n),
    "truncated": st.lists(
        st.builds(_cut, _frames, st.integers(0, 255)), min_size=1, max_size=20
    ).map(b"".join),
    "bad_crc": st.lists(
        st.builds(_bad_crc, _frames, st.sampled_from([0x01, 0x40, 0x80])), min_size=1, max_size=8
    ).map(b"".join),
    "random": st.binary(min_size=1, max_size=300),
}

noise = st.one_of(*PATTERNS.values())
