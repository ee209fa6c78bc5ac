"""``mx.recordio``: read and write MXNet's RecordIO files (``.rec`` with a ``.idx`` index).

The byte format is dmlc-core's, so files written by MXNet (``im2rec``) read here and
files written here read in MXNet. Each record is stored as::

    uint32 magic 0xced7230a | uint32 lrec = cflag << 29 | length | data | zero pad to 4 bytes

A record whose data holds the magic word at a 4-byte aligned offset is split there
into parts (cflag 1 = first, 2 = middle, 3 = last; 0 = whole record) and the magic
word itself is left out; reading joins the parts back with the magic word.
"""
import io
import numbers
import os
import struct
from collections import namedtuple

import numpy as np

__all__ = ["MXRecordIO", "MXIndexedRecordIO", "IRHeader", "pack", "unpack",
           "pack_img", "unpack_img"]

_MAGIC = 0xced7230a
_MAGIC_BYTES = struct.pack("<I", _MAGIC)
_LEN_MASK = (1 << 29) - 1


def _encode_lrec(cflag, length):
    return struct.pack("<II", _MAGIC, (cflag << 29) | length)


def _pad4(n):
    return (4 - n % 4) % 4


def _record_bytes(buf):
    """The on-disk bytes of one record (splitting at aligned magic words, as dmlc does)."""
    n = len(buf)
    if n >= 1 << 29:
        raise ValueError("RecordIO only accepts records of less than 2^29 bytes, got %d" % n)
    parts = []
    start = 0
    # Only aligned occurrences count; find() then steps on to the next candidate.
    pos = buf.find(_MAGIC_BYTES)
    while pos != -1 and pos + 4 <= (n // 4) * 4:
        if pos % 4 == 0:
            parts.append(_encode_lrec(1 if start == 0 else 2, pos - start))
            parts.append(buf[start:pos])
            start = pos + 4
            pos = buf.find(_MAGIC_BYTES, start)
        else:
            pos = buf.find(_MAGIC_BYTES, pos + 1)
    parts.append(_encode_lrec(3 if start != 0 else 0, n - start))
    parts.append(buf[start:])
    parts.append(b"\0" * _pad4(n))
    return b"".join(parts)


class MXRecordIO:
    """Sequential reader or writer of a RecordIO file, as ``mxnet.recordio.MXRecordIO``.

    Parameters
    ----------
    uri : str
        Path to the record file.
    flag : {'r', 'w'}
        Read, or write (truncates the file).

    Examples
    --------
    >>> rec = MXRecordIO(path, 'w')              # doctest: +SKIP
    >>> rec.write(b'record_0'); rec.close()      # doctest: +SKIP
    >>> MXRecordIO(path, 'r').read()             # doctest: +SKIP
    b'record_0'
    """

    def __init__(self, uri, flag):
        self.uri = str(uri)
        self.flag = flag
        self.pid = None
        self.is_open = False
        self._file = None
        self.open()

    def open(self):
        """Open the file (for writing it is truncated)."""
        if self.flag == "w":
            self._file = open(self.uri, "wb")
            self.writable = True
        elif self.flag == "r":
            self._file = open(self.uri, "rb")
            self.writable = False
        else:
            raise ValueError("Invalid flag %r: MXRecordIO takes 'r' or 'w'" % (self.flag,))
        self.pid = os.getpid()
        self.is_open = True

    def close(self):
        """Close the file; reading or writing after this raises."""
        if not self.is_open:
            return
        self._file.close()
        self._file = None
        self.is_open = False
        self.pid = None

    def __del__(self):
        if getattr(self, "is_open", False):
            self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __getstate__(self):
        # A file object does not pickle: reopen in the receiving process instead.
        d = dict(self.__dict__)
        d["_file"] = None
        d["pid"] = None
        return d

    def __setstate__(self, d):
        self.__dict__.update(d)
        if d["is_open"]:
            self.is_open = False
            self.open()

    def _check_open(self, what):
        if not self.is_open:
            raise ValueError("MXRecordIO.%s: %s is closed" % (what, self.uri))

    def _check_pid(self, allow_reset=False):
        """A forked process shares the file offset with its parent: reopen (or refuse)."""
        if self.pid != os.getpid():
            if allow_reset:
                self.reset()
            else:
                raise RuntimeError("Forbidden operation in multiple processes: %s was opened "
                                   "in process %s; reopen it (or use read_idx) in this one"
                                   % (self.uri, self.pid))

    def reset(self):
        """Go back to the first record (in 'w' mode this truncates the file)."""
        self.close()
        self.open()

    def write(self, buf):
        """Append one record.

        Parameters
        ----------
        buf : bytes
            The record's content.
        """
        self._check_open("write")
        if not self.writable:
            raise ValueError("MXRecordIO.write: %s was opened with flag 'r'" % self.uri)
        if not isinstance(buf, (bytes, bytearray, memoryview)):
            raise TypeError("MXRecordIO.write expects bytes, got %s" % type(buf).__name__)
        self._check_pid(allow_reset=False)
        self._file.write(_record_bytes(bytes(buf)))

    def read(self):
        """The next record as bytes, or None at the end of the file."""
        self._check_open("read")
        if self.writable:
            raise ValueError("MXRecordIO.read: %s was opened with flag 'w'" % self.uri)
        self._check_pid(allow_reset=False)
        return _read_record(self._file, self.uri)


def _read_record(f, uri):
    out = []
    while True:
        head = f.read(8)
        if not head:
            if out:
                raise ValueError("Invalid RecordIO file %s: it ends inside a record" % uri)
            return None
        if len(head) != 8:
            raise ValueError("Invalid RecordIO file %s: truncated record header" % uri)
        magic, lrec = struct.unpack("<II", head)
        if magic != _MAGIC:
            raise ValueError("Invalid RecordIO file %s: bad magic number 0x%08x at offset %d"
                             % (uri, magic, f.tell() - 8))
        cflag, length = lrec >> 29, lrec & _LEN_MASK
        left = os.fstat(f.fileno()).st_size - f.tell()
        if length > left:       # checked before reading: the header could claim 512 MB
            raise ValueError("Invalid RecordIO file %s: a record at offset %d declares %d "
                             "bytes but only %d remain (truncated record)"
                             % (uri, f.tell() - 8, length, left))
        data = f.read(length + _pad4(length))
        out.append(data[:length])
        if cflag in (0, 3):
            return _MAGIC_BYTES.join(out)


class MXIndexedRecordIO(MXRecordIO):
    """RecordIO with random access through an index file of ``key\\toffset`` lines.

    Parameters
    ----------
    idx_path : str
        Path to the index file.
    uri : str
        Path to the record file.
    flag : {'r', 'w'}
    key_type : type, default int
        Type of the keys in the index.

    Examples
    --------
    >>> rec = MXIndexedRecordIO(idx, path, 'w')      # doctest: +SKIP
    >>> for i in range(5): rec.write_idx(i, b'record_%d' % i)   # doctest: +SKIP
    >>> rec.close(); MXIndexedRecordIO(idx, path, 'r').read_idx(3)  # doctest: +SKIP
    b'record_3'
    """

    def __init__(self, idx_path, uri, flag, key_type=int):
        self.idx_path = str(idx_path)
        self.idx = {}
        self.keys = []
        self.key_type = key_type
        self.fidx = None
        super().__init__(uri, flag)

    def open(self):
        super().open()
        self.idx = {}
        self.keys = []
        self.fidx = open(self.idx_path, self.flag)
        if not self.writable:
            size = os.fstat(self._file.fileno()).st_size
            for n, line in enumerate(self.fidx, 1):
                line = line.strip()
                if not line:
                    continue
                fields = line.split("\t")
                try:
                    key, pos = self.key_type(fields[0]), int(fields[1])
                except (IndexError, ValueError):
                    raise ValueError("Invalid index file %s: line %d is %r, expected "
                                     "'key<TAB>offset'" % (self.idx_path, n, line)) from None
                if not 0 <= pos < size:
                    raise ValueError("Invalid index file %s: line %d gives offset %d, outside "
                                     "the %d bytes of %s" % (self.idx_path, n, pos, size,
                                                             self.uri))
                self.idx[key] = pos
                self.keys.append(key)

    def close(self):
        if not self.is_open:
            return
        super().close()
        self.fidx.close()
        self.fidx = None

    def __getstate__(self):
        d = super().__getstate__()
        d["fidx"] = None
        return d

    def seek(self, idx):
        """Move the read position to the record with key ``idx``."""
        self._check_open("seek")
        if self.writable:
            raise ValueError("MXIndexedRecordIO.seek: %s was opened with flag 'w'" % self.uri)
        self._check_pid(allow_reset=True)
        try:
            pos = self.idx[idx]
        except KeyError:
            raise KeyError("MXIndexedRecordIO: key %r is not in the index %s"
                           % (idx, self.idx_path)) from None
        self._file.seek(pos)

    def tell(self):
        """The current write position (the offset the next record will have)."""
        self._check_open("tell")
        if not self.writable:
            raise ValueError("MXIndexedRecordIO.tell: %s was opened with flag 'r'" % self.uri)
        return self._file.tell()

    def read_idx(self, idx):
        """The record with key ``idx``."""
        self.seek(idx)
        return self.read()

    def write_idx(self, idx, buf):
        """Append a record under key ``idx`` and index it."""
        key = self.key_type(idx)
        pos = self.tell()
        self.write(buf)
        self.fidx.write("%s\t%d\n" % (str(key), pos))
        self.idx[key] = pos
        self.keys.append(key)


IRHeader = namedtuple("HEADER", ["flag", "label", "id", "id2"])
IRHeader.__doc__ = """Header of an image record: ``flag`` (number of labels when > 0),
``label`` (a float, or a float32 array when flag > 0), ``id`` and ``id2`` (uint64)."""

_IR_FORMAT = "IfQQ"
_IR_SIZE = struct.calcsize(_IR_FORMAT)


def pack(header, s):
    """Pack bytes ``s`` with an ``IRHeader`` into one record.

    A scalar label goes in the header (flag 0); an array label is written as float32
    after the header, and ``flag`` becomes its length.

    Examples
    --------
    >>> unpack(pack(IRHeader(0, [1, 2], 7, 0), b'x'))[0].flag
    2
    """
    header = IRHeader(*header)
    if isinstance(header.label, numbers.Number):
        header = header._replace(flag=0)
    else:
        label = np.asarray(header.label, dtype=np.float32)
        header = header._replace(flag=label.size, label=0)
        s = label.tobytes() + bytes(s)
    return struct.pack(_IR_FORMAT, *header) + bytes(s)


def unpack(s):
    """Split a record into its ``IRHeader`` and payload bytes (the inverse of ``pack``)."""
    if len(s) < _IR_SIZE:
        raise ValueError("unpack: a record needs at least %d header bytes, got %d"
                         % (_IR_SIZE, len(s)))
    header = IRHeader(*struct.unpack(_IR_FORMAT, s[:_IR_SIZE]))
    s = s[_IR_SIZE:]
    if header.flag > 0:
        if header.flag * 4 > len(s):
            raise ValueError("unpack: the header declares %d float labels (%d bytes) but the "
                             "record has %d bytes after it" % (header.flag, header.flag * 4,
                                                                len(s)))
        header = header._replace(label=np.frombuffer(s, np.float32, header.flag))
        s = s[header.flag * 4:]
    return header, s


# ---------------------------------------------------------------- image codecs

def _import_cv2():
    """The ``cv2`` module, or None when OpenCV is not installed (MXNet's ``cv2`` name)."""
    try:
        import cv2
    except ImportError:
        return None
    return cv2


def _codec():
    """'cv2' or 'pil', whichever is installed (OpenCV first, as MXNet uses it)."""
    try:
        import cv2  # noqa: F401
        return "cv2"
    except ImportError:
        pass
    try:
        import PIL.Image  # noqa: F401
        return "pil"
    except ImportError:
        raise ImportError("Encoding and decoding images needs OpenCV (pip install "
                          "opencv-python-headless) or Pillow (pip install pillow); "
                          "neither is installed") from None


def _decode_image(buf, flag=-1, to_rgb=False):
    """Decode image bytes to a uint8 HWC (or HW) NumPy array.

    ``flag`` is OpenCV's: 1 colour (3 channels), 0 greyscale (H, W), -1 unchanged.
    Colour channels come in BGR order (OpenCV's) unless ``to_rgb``.
    """
    if _codec() == "cv2":
        import cv2
        img = cv2.imdecode(np.frombuffer(buf, dtype=np.uint8), flag)
        if img is None:
            raise ValueError("could not decode the image bytes (%d bytes)" % len(buf))
        if to_rgb and img.ndim == 3 and img.shape[2] >= 3:
            img = img[:, :, 2::-1] if img.shape[2] == 3 else img[:, :, [2, 1, 0, 3]]
        return np.ascontiguousarray(img)
    import PIL.Image
    pil = PIL.Image.open(io.BytesIO(bytes(buf)))
    if flag == 1:
        pil = pil.convert("RGB")
    elif flag == 0:
        pil = pil.convert("L")
    elif pil.mode not in ("L", "RGB", "RGBA"):
        pil = pil.convert("RGBA" if "A" in pil.mode else "RGB")
    img = np.asarray(pil, dtype=np.uint8)
    if img.ndim == 3 and not to_rgb:
        img = img[:, :, 2::-1] if img.shape[2] == 3 else img[:, :, [2, 1, 0, 3]]
    return np.ascontiguousarray(img)


def _encode_image(img, img_fmt=".jpg", quality=95):
    """Encode a uint8 HW or HWC (BGR, as OpenCV) array to image bytes."""
    fmt = img_fmt.upper()
    if fmt not in (".JPG", ".JPEG", ".PNG"):
        raise ValueError("pack_img: img_fmt must be '.jpg', '.jpeg' or '.png', got %r" % img_fmt)
    img = np.asarray(img)
    if _codec() == "cv2":
        import cv2
        params = ([cv2.IMWRITE_JPEG_QUALITY, quality] if fmt != ".PNG"
                  else [cv2.IMWRITE_PNG_COMPRESSION, quality])
        ok, buf = cv2.imencode(img_fmt, img, params)
        if not ok:
            raise ValueError("pack_img: failed to encode the image")
        return buf.tobytes()
    import PIL.Image
    if img.ndim == 3 and img.shape[2] == 1:
        img = img[:, :, 0]
    if img.ndim == 3:
        img = img[:, :, 2::-1] if img.shape[2] == 3 else img[:, :, [2, 1, 0, 3]]
    out = io.BytesIO()
    pil = PIL.Image.fromarray(np.ascontiguousarray(img.astype(np.uint8, copy=False)))
    if fmt == ".PNG":
        # NOTE: OpenCV clamps the PNG level to 0-9, so the default quality=95 means 9.
        pil.save(out, format="PNG", compress_level=min(max(int(quality), 0), 9))
    else:
        pil.save(out, format="JPEG", quality=int(quality))
    return out.getvalue()


def unpack_img(s, iscolor=-1):
    """Unpack a record into its ``IRHeader`` and decoded image (a uint8 NumPy array).

    ``iscolor`` is OpenCV's imdecode flag (1 colour, 0 grey, -1 as stored); colour
    images come in BGR channel order, as from OpenCV in MXNet. Uses OpenCV, or
    Pillow when OpenCV is not installed.
    """
    header, s = unpack(s)
    return header, _decode_image(s, iscolor)


def pack_img(header, img, quality=95, img_fmt=".jpg"):
    """Encode a uint8 image (HW or HWC in BGR order, as OpenCV) and pack it with ``header``.

    Parameters
    ----------
    header : IRHeader
    img : numpy.ndarray
    quality : int
        JPEG quality (1-100), or PNG compression level (0-9).
    img_fmt : {'.jpg', '.png'}
    """
    return pack(header, _encode_image(img, img_fmt, quality))


# Names MXNet's module also shows, served from where they live in mxlite.
from ._lazy import exports as _exports  # noqa: E402
__getattr__, __dir__ = _exports(__name__, {
    "c_str": "mxlite.base",
    "check_call": "mxlite.base",
    "cv2": "mxlite.recordio:_import_cv2()",
})
