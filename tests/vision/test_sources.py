"""Frame sources: folders of frames, video files, cameras, and bad sources."""

import cv2
import numpy as np
import pytest

from companion.errors import BadInput
from vision.sources import FOLDER_FPS, VideoCutShort, open_source, quiet_stderr


def _frames(folder, n=5, size=(48, 32)):
    folder.mkdir(parents=True, exist_ok=True)
    for k in range(n):
        img = np.full((size[1], size[0], 3), 20 * k, np.uint8)
        assert cv2.imwrite(str(folder / f"f_{k:03d}.png"), img)
    return folder


def test_folder_frames_in_name_order(tmp_path):
    src = open_source(str(_frames(tmp_path / "frames")))
    (tmp_path / "frames" / "notes.txt").write_text("not a frame")
    assert src.kind == "folder" and src.length == 5 and src.fps == FOLDER_FPS
    got = [(i, int(img[0, 0, 0]), img.shape) for i, img in src.frames()]
    assert got == [(k, 20 * k, (32, 48, 3)) for k in range(5)]


def test_unpadded_frame_numbers_are_read_as_numbers_and_hidden_files_skipped(tmp_path):
    # ffmpeg's %d.jpg writes 0.png ... 12.png: in plain text order 10 came
    # before 2, and the game was judged shuffled with exit 0; a Mac's copy
    # leaves ._0.png beside each frame, which is no picture
    folder = tmp_path / "unpadded"
    folder.mkdir()
    for k in range(13):
        assert cv2.imwrite(str(folder / f"{k}.png"), np.full((8, 8, 3), 10 * k, np.uint8))
    (folder / "._0.png").write_bytes(b"\x00\x05\x16\x07 AppleDouble")
    src = open_source(str(folder))
    assert src.length == 13
    assert [int(img[0, 0, 0]) for _, img in src.frames()] == [10 * k for k in range(13)]


def test_frame_order_key():
    from vision.sources import frame_order_key
    names = ["f_10.jpg", "f_9.jpg", "f_009b.jpg", "g.jpg", "f_1.jpg", "f_01.jpg", "cam2_f_3.jpg", "cam10_f_1.jpg"]
    assert sorted(names, key=frame_order_key) == ["cam2_f_3.jpg", "cam10_f_1.jpg", "f_01.jpg", "f_1.jpg",
                                                  "f_9.jpg", "f_009b.jpg", "f_10.jpg", "g.jpg"]


def test_folder_without_prefetch_and_given_rate(tmp_path):
    src = open_source(str(_frames(tmp_path / "frames", 3)), fps=12.5)
    assert src.fps == 12.5
    assert [i for i, _ in src.frames(prefetch=0)] == [0, 1, 2]


def test_stopping_early_stops_the_decoder(tmp_path):
    src = open_source(str(_frames(tmp_path / "frames", 5)))
    gen = src.frames(prefetch=1)
    assert next(gen)[0] == 0
    gen.close()                      # the decoder thread ends (joined in the generator)


def test_missing_source(tmp_path):
    with pytest.raises(BadInput, match="does not exist"):
        open_source(str(tmp_path / "nothing-here"))


def test_empty_folder(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(BadInput, match="holds no image frames"):
        open_source(str(tmp_path / "empty"))


def test_unreadable_frame_in_a_folder_is_skipped_and_named(tmp_path):
    # (it ended the run at that frame, the rest of the game unjudged: a
    # break-test, session 54; a video's damaged frame was already read past)
    folder = _frames(tmp_path / "frames", 3)
    (folder / "f_001.png").write_bytes(b"not a png")
    src = open_source(str(folder))
    assert [i for i, _ in src.frames()] == [0, 2]            # frame 2 keeps its number
    assert src.damaged == [1] and src.damaged_why == f"{folder / 'f_001.png'}: not an image OpenCV can decode"


def test_a_folder_with_no_readable_frame_says_why(tmp_path):
    folder = _frames(tmp_path / "frames", 2)
    for k in range(2):
        (folder / f"f_{k:03d}.png").write_bytes(b"not a png")
    with pytest.raises(BadInput, match=r"^cannot read frame .*f_000.png: not an image OpenCV can decode$"):
        list(open_source(str(folder)).frames(prefetch=0))


def test_a_frame_larger_than_opencv_reads(tmp_path):
    # a PNG whose header claims 60000 x 60000 pixels: cv2.imread raises
    # (CV_IO_MAX_IMAGE_PIXELS) rather than returning None
    import struct
    import zlib
    folder = _frames(tmp_path / "frames", 2)
    ok, buf = cv2.imencode(".png", np.zeros((8, 8, 3), np.uint8))
    b = bytearray(buf.tobytes())
    b[16:24] = struct.pack(">II", 60000, 60000)
    b[29:33] = struct.pack(">I", zlib.crc32(bytes(b[12:29])) & 0xFFFFFFFF)
    (folder / "f_001.png").write_bytes(bytes(b))
    src = open_source(str(folder))
    assert [i for i, _ in src.frames(prefetch=0)] == [0]
    assert src.damaged == [1] and "f_001.png: its header claims a picture larger" in src.damaged_why


def test_a_folder_that_states_its_rate_is_taken_at_it(tmp_path):
    # a recording written by vision.synth.recording.write_recording carries
    # its rate in truth.json beside the frames (session 54: a folder without
    # --fps is otherwise taken at FOLDER_FPS, and a wrong rate loses moves)
    import json
    folder = _frames(tmp_path / "frames", 3)
    (folder / "a-notes.json").write_text("{not json")                  # passed over
    (folder / "b-list.json").write_text("[1, 2]")                      # not an object
    (folder / "c-flag.json").write_text(json.dumps({"fps": True}))     # not a number
    (folder / "d-zero.json").write_text(json.dumps({"fps": 0}))        # no rate
    src = open_source(str(folder))
    assert src.fps == FOLDER_FPS and src.fps_assumed and src.fps_from == ""
    (folder / "truth.json").write_text(json.dumps({"variant": "love", "fps": 25, "frames": 3}))
    src = open_source(str(folder))
    assert src.fps == 25.0 and not src.fps_assumed and src.fps_from == "truth.json"
    assert [i for i, _ in src.frames(prefetch=0)] == [0, 1, 2]        # (a JSON is no frame)
    given = open_source(str(folder), fps=12)
    assert given.fps == 12.0 and given.fps_from == "" and not given.fps_assumed


def _frames_one_cut_in_half(folder, suffix: str):
    """Three noise frames ``f_000..f_002`` + suffix, f_001 cut to half its
    bytes; returns ``(folder, f_001's whole bytes)``."""
    folder.mkdir()
    img = (np.random.default_rng(0).random((120, 160, 3)) * 255).astype(np.uint8)
    for k in range(3):
        assert cv2.imwrite(str(folder / f"f_{k:03d}{suffix}"), img)
    whole = (folder / f"f_001{suffix}").read_bytes()
    (folder / f"f_001{suffix}").write_bytes(whole[:len(whole) // 2])
    return folder, whole


def test_a_jpeg_frame_cut_short_is_refused_without_libjpeg_noise(tmp_path, capfd):
    # cv2.imread would fill the missing rows with grey (and libjpeg would say
    # "Premature end of JPEG file" on stderr): the referee would judge half a
    # board.  The frame is refused by name instead, as single photos are
    # (and skipped: the frames after it are judged).
    folder, _ = _frames_one_cut_in_half(tmp_path / "frames", ".jpg")
    src = open_source(str(folder))
    assert [i for i, _ in src.frames(prefetch=0)] == [0, 2]
    assert src.damaged == [1] and src.damaged_why.endswith(
        "f_001.jpg: the JPEG file is cut short (no end-of-image marker)")
    assert "Premature end" not in capfd.readouterr().err


def test_a_text_file_named_jpg_among_frames_is_no_image_not_a_jpeg_cut_short(tmp_path, capfd):
    # a break-test's "hello" in b.jpg was called a JPEG cut short
    folder, _ = _frames_one_cut_in_half(tmp_path / "frames", ".jpg")
    (folder / "f_001.jpg").write_text("hello\n")
    src = open_source(str(folder))
    assert [i for i, _ in src.frames(prefetch=0)] == [0, 2]
    assert src.damaged_why.endswith("f_001.jpg: not an image OpenCV can decode")


def test_a_folder_of_heic_pictures_says_they_cannot_be_read(tmp_path):
    # an iPhone's default format: the folder "held no image frames"
    folder = tmp_path / "phone"
    folder.mkdir()
    (folder / "IMG_0001.HEIC").write_bytes(b"\x00\x00\x00\x18ftypheic" + bytes(64))
    with pytest.raises(BadInput, match=r"holds no image frames \(.*\); its HEIC pictures cannot be read: export them "
                                       r"as JPEG$"):
        open_source(str(folder))


def test_a_folder_holding_a_video_names_it(tmp_path):
    """A folder holding the game's video rather than its frames (the
    recording's folder given for the recording) names the file to give;
    it said only that the folder held no image frames."""
    folder = tmp_path / "game"
    folder.mkdir()
    (folder / "notes.txt").write_text("table 3\n")
    (folder / "table3.MP4").write_bytes(b"not read")
    with pytest.raises(BadInput) as err:
        open_source(str(folder))
    assert str(err.value) == (f"folder {folder} holds no image frames (.bmp, .jpeg, .jpg, .png, .tif, .tiff, .webp); "
                              f"it holds a video: give the video file itself, e.g. {folder / 'table3.MP4'}")
    (folder / "table4.avi").write_bytes(b"not read")
    with pytest.raises(BadInput, match=r"; it holds videos: give the video file itself, e\.g\. .*table3\.MP4$"):
        open_source(str(folder))


def test_text_file_named_mp4(tmp_path, capfd):
    bad = tmp_path / "x.mp4"
    bad.write_text("hello, I am not a video\n")
    with pytest.raises(BadInput, match="x.mp4"):
        open_source(str(bad))
    assert capfd.readouterr().err == ""          # FFmpeg's own complaint is kept off the terminal


def test_camera_not_present(capfd):
    with pytest.raises(BadInput, match="camera 99 is not present"):
        open_source("99")
    assert capfd.readouterr().err == ""


def test_a_file_named_as_a_camera_index_is_pointed_to(tmp_path, monkeypatch):
    """SOURCE ``7`` is camera 7 even where a file ``7`` lies in the current
    folder (a recording saved under a number): the line says how to give
    the file, where it only said the camera was not present."""
    monkeypatch.chdir(tmp_path)
    _flat_video(tmp_path / "99.avi", 10.0).rename(tmp_path / "99")
    with pytest.raises(BadInput) as err:
        open_source("99")
    assert str(err.value) == ("camera 99 is not present (no /dev/video99); 99 is read as a camera index: for the file "
                              "99 here, give ./99")
    assert open_source("./99").kind == "video"
    (tmp_path / "98").mkdir()
    with pytest.raises(BadInput, match=r"for the folder 98 here, give \./98$"):
        open_source("98")


def test_bad_rate():
    with pytest.raises(BadInput, match="frame rate"):
        open_source("99", fps=0)


def test_video_file_round_trip(tmp_path):
    path = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 15.0, (64, 48))
    if not writer.isOpened():
        pytest.skip("no MJPG encoder in this OpenCV build")
    for k in range(6):
        writer.write(np.full((48, 64, 3), 40 * k, np.uint8))
    writer.release()
    src = open_source(str(path))
    assert src.kind == "video" and src.fps == pytest.approx(15.0)
    frames = list(src.frames())
    assert [i for i, _ in frames] == list(range(6))
    assert abs(int(frames[3][1].mean()) - 120) < 6


def _flat_video(path, fps, n=4, size=(64, 48)):
    """An MJPG .avi of ``n`` flat grey frames declaring ``fps`` frames a second."""
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), fps, size)
    if not writer.isOpened():
        pytest.skip("no MJPG encoder in this OpenCV build")
    for k in range(n):
        writer.write(np.full((size[1], size[0], 3), 40 * k, np.uint8))
    writer.release()
    return path


def test_a_time_lapse_video_keeps_the_rate_it_declares(tmp_path):
    """A video declaring under 1 frame a second (a time-lapse, a frame every
    2 s) is counted at that rate, as ``--fps 0.5`` would be: it was taken as
    30 a second, and a break-test's 0.5 fps time-lapse of the demo came out
    with none of its 11 events (exit 0)."""
    from vision.sources import declared_rate
    src = open_source(str(_flat_video(tmp_path / "lapse.avi", 0.5)))
    assert src.fps == pytest.approx(0.5) and not src.fps_assumed and src.fps_declared == pytest.approx(0.5)
    src = open_source(str(_flat_video(tmp_path / "lapse5.avi", 0.2)), fps=2.0)   # --fps still replaces it
    assert src.fps == 2.0 and not src.fps_assumed
    assert declared_rate(0.01) == 0.01 and declared_rate(1000.0) == 1000.0
    assert declared_rate(0.0) is None and declared_rate(0.005) is None and declared_rate(90000.0) is None
    assert declared_rate(float("nan")) is None and declared_rate(None) is None


def test_a_video_without_a_usable_rate_is_taken_at_10_and_says_so(tmp_path):
    """A rate no referee can count with (here 600 000 / 1000 declared) is
    taken as 10 a second (:data:`vision.sources.FOLDER_FPS`), and the run's
    note says so, naming the video's own rate and ``--fps``."""
    from companion.commands.referee import rate_note
    path = tmp_path / "odd.avi"
    _flat_video(path, 10.0)
    data = bytearray(path.read_bytes())
    at = data.index(b"strh") + 8 + 20           # strh: fccType, handler, flags, priority+language, initial, scale, rate
    scale, = np.frombuffer(bytes(data[at:at + 4]), "<u4")
    data[at + 4:at + 8] = int(scale * 5000).to_bytes(4, "little")        # 5000 frames a second
    path.write_bytes(bytes(data))
    src = open_source(str(path))
    if not src.fps_declared > 1000:
        pytest.skip(f"this OpenCV reads the patched rate as {src.fps_declared}")
    assert src.fps == 10.0 and src.fps_assumed
    assert rate_note(src) == (f"the frames are taken as 10 a second (the video declares {src.fps_declared:g} frames "
                              "a second): give --fps with the rate they were taken at")
    assert open_source(str(path), fps=10).fps_assumed is False


def test_a_video_of_frames_over_the_pixel_limit_is_refused_when_opened(tmp_path, monkeypatch, capfd):
    """A video whose frames hold more pixels than the companion reads (the
    command line's 100 million, as for a photo) is refused from its header,
    in one line naming the size; a break-test's 3 frames of 12000 x 9000 px
    took 41 s and 3.2 GB of memory to find no mat (exit 3).  Here the limit
    is lowered to 3000 pixels: 64 x 48 (3072) is over it, 48 x 36 not."""
    from vision.sources import max_frame_pixels
    big, small = _flat_video(tmp_path / "big.avi", 10.0), _flat_video(tmp_path / "small.avi", 10.0, size=(48, 36))
    monkeypatch.setenv("OPENCV_IO_MAX_IMAGE_PIXELS", "3000")
    assert max_frame_pixels() == 3000
    with pytest.raises(BadInput) as err:
        open_source(str(big))
    assert str(err.value) == (f"cannot read video {big}: its frames are 64x48 px, more than the companion reads "
                              "(at most 0.003 million pixels a frame): scale it down")
    assert len(list(open_source(str(small)).frames())) == 4
    assert capfd.readouterr().err == ""
    monkeypatch.delenv("OPENCV_IO_MAX_IMAGE_PIXELS")
    assert max_frame_pixels() == 2 ** 30


def _damage_frames(path, numbers) -> None:
    """Overwrite the JPEG data of these frames of an MJPG .avi with noise of
    the same length (the file's index stays valid: a damaged packet)."""
    data = bytearray(path.read_bytes())
    at, k = data.index(b"movi") + 4, 0
    end = data.find(b"idx1", at)
    rng = np.random.default_rng(1)
    while True:
        at = data.find(b"00dc", at, end if end > 0 else len(data))
        if at < 0:
            break
        n = int.from_bytes(data[at + 4:at + 8], "little")
        if k in numbers and n:
            data[at + 8:at + 8 + n] = rng.integers(0, 256, n, dtype=np.uint8).tobytes()
        at += 8 + n + n % 2       # (chunks are padded to an even length)
        k += 1
    path.write_bytes(bytes(data))


def test_damaged_frames_in_the_middle_of_a_video_are_read_past(tmp_path, capfd):
    """Frames that fail to decode in the middle of a video (damaged packets)
    are read past and listed in ``damaged``; the frames after them keep
    their numbers.  A break-test's one damaged frame stopped its recording
    there as "cut short", losing the 6 events after it."""
    from companion.commands.referee import damaged_note
    path = _noise_video(tmp_path / "clip.avi", n=40)
    _damage_frames(path, {12, 20, 21, 22})
    src = open_source(str(path))
    got = [i for i, _ in src.frames()]
    assert got == [i for i in range(40) if i not in (12, 20, 21, 22)]
    assert src.damaged == [12, 20, 21, 22]
    assert capfd.readouterr().err == ""
    assert damaged_note(src.damaged) == ("4 frames of the video could not be decoded (damaged: frames 12-22) and "
                                         "were skipped; the frames after them were judged as usual")
    assert damaged_note([7]).startswith("1 frame of the video could not be decoded (damaged: frame 7) and was skipped")


def test_a_video_whose_first_frames_are_damaged_opens(tmp_path):
    """A video whose first frames cannot be decoded was refused as "no frame
    could be decoded" though every later frame could; they are read past
    like damaged frames elsewhere."""
    path = _noise_video(tmp_path / "clip.avi", n=20)
    _damage_frames(path, {0, 1})
    src = open_source(str(path))
    assert [i for i, _ in src.frames()] == list(range(2, 20)) and src.damaged == [0, 1]
    _damage_frames(path, set(range(20)))
    with pytest.raises(BadInput, match="no frame could be decoded"):
        open_source(str(path))


def test_a_video_cut_short_is_still_cut_short_and_its_last_damaged_frames_end_it(tmp_path):
    """A file cut short fails on every read from its cut: that is its end
    (VideoCutShort), not damaged frames; damaged frames at the very end of
    a video end it (no frame follows them)."""
    path = _noise_video(tmp_path / "clip.avi", n=40)
    whole = path.read_bytes()
    cut = tmp_path / "cut.avi"
    cut.write_bytes(whole[: len(whole) // 2])
    src = open_source(str(cut))
    with pytest.raises(VideoCutShort):
        list(src.frames())
    assert src.damaged == []
    _damage_frames(path, {38, 39})
    src = open_source(str(path))
    assert [i for i, _ in src.frames()] == list(range(38)) and src.damaged == []


def test_an_mp4_without_its_index_is_named_as_one(tmp_path, capfd):
    """An MP4 whose writer stopped before adding its index (the ``moov``
    box: a phone that died mid-recording, a copy cut short) cannot be opened
    at all; the line says why, where it only said "not a video file OpenCV
    can read".  A HEIC photo is named as a photo; other files get no hint."""
    import struct
    def box(kind, body=b""):
        return struct.pack(">I4s", 8 + len(body), kind) + body
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(box(b"ftyp", b"isom\0\0\2\0isomiso2mp41") + box(b"free")
                    + struct.pack(">I4s", 10_000_000, b"mdat") + bytes(5000))
    with pytest.raises(BadInput) as err:
        open_source(str(cut))
    assert str(err.value) == (f"cannot open video {cut}: not a video file OpenCV can read (an MP4 without its index, "
                              "the moov box: a recording stopped before its file was finished, or a copy cut short)")
    # its index there but its end cut off (a break-test, session 56: a file
    # short of its last 2000 bytes got no hint)
    short = tmp_path / "short.mp4"
    short.write_bytes(box(b"ftyp", b"isom\0\0\2\0isomiso2mp41") + box(b"mdat", bytes(5000))
                      + struct.pack(">I4s", 4000, b"moov") + bytes(1992))
    with pytest.raises(BadInput) as err:
        open_source(str(short))
    assert str(err.value) == (f"cannot open video {short}: not a video file OpenCV can read (an MP4 whose index, "
                              "the moov box at its end, is cut short: a copy or a download that stopped before the "
                              "end)")
    heic = tmp_path / "photo.heic"
    heic.write_bytes(box(b"ftyp", b"heic\0\0\0\0mif1heic") + box(b"meta", bytes(40)) + box(b"mdat", bytes(400)))
    with pytest.raises(BadInput, match=r"not a video file OpenCV can read \(a HEIC or AVIF photo, not a video"):
        open_source(str(heic))
    (tmp_path / "notes.mp4").write_text("not a video\n")
    with pytest.raises(BadInput) as err:
        open_source(str(tmp_path / "notes.mp4"))
    assert str(err.value).endswith("not a video file OpenCV can read")
    assert capfd.readouterr().err == ""


def test_a_raw_stream_without_a_frame_count_says_its_rate_may_be_a_guess(tmp_path):
    """A raw MJPEG stream (JPEGs one after another, no container: what some
    cameras save) states no rate; FFmpeg gives 25 frames a second. It is
    used, with a note saying it may be a guess; a break-test's raw stream
    taken at 10 a second was judged at 25 with no word, losing both
    penalties and the attempt and giving every claim to one player."""
    from companion.commands.referee import rate_note
    path = tmp_path / "table.mjpeg"
    with open(path, "wb") as fh:
        for k in range(6):
            fh.write(cv2.imencode(".jpg", np.full((48, 64, 3), 40 * k, np.uint8))[1].tobytes())
    src = open_source(str(path))
    assert src.kind == "video" and src.length is None and src.fps_assumed
    assert len(list(src.frames())) == 6
    assert rate_note(src) == (f"the frames are taken as {src.fps:g} a second, the rate the video gives, which may be "
                              "a guess (it states no frame count, as a raw stream does): give --fps with the rate "
                              "they were taken at")
    assert not open_source(str(path), fps=10).fps_assumed
    assert not open_source(str(_flat_video(tmp_path / "clip.avi", 10.0))).fps_assumed     # a container's rate


def test_quiet_stderr_restores_the_descriptor(capfd):
    import os
    with quiet_stderr():
        os.write(2, b"hidden\n")
    os.write(2, b"shown\n")
    assert capfd.readouterr().err == "shown\n"


def _noise_video(path, n=40, size=(64, 48), fps=10.0):
    """An MJPG .avi of ``n`` frames of noise (large frames, so a cut lands mid-video)."""
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), fps, size)
    if not writer.isOpened():
        pytest.skip("no MJPG encoder in this OpenCV build")
    rng = np.random.default_rng(0)
    for _ in range(n):
        writer.write((rng.random((size[1], size[0], 3)) * 255).astype(np.uint8))
    writer.release()
    return path


def test_cut_short_rule_tolerates_estimated_counts():
    from vision.sources import cut_short
    assert cut_short(150, 496) and cut_short(3, 496) and cut_short(0, 40)
    assert not cut_short(496, 496) and not cut_short(500, 496)
    assert not cut_short(493, 496)            # 3 frames: an estimated count may be that far off
    assert not cut_short(475, 496)            # 21 frames, under 5 % of 496
    assert cut_short(470, 496)                # 26 frames, over 5 %
    assert not cut_short(7, 10)               # 3 frames of a short clip
    assert cut_short(6, 10)
    assert not cut_short(0, None) and not cut_short(0, 0)   # no count (a camera): never cut short


def test_a_video_cut_short_yields_its_frames_then_says_so(tmp_path):
    from vision.sources import VideoCutShort
    whole = _noise_video(tmp_path / "clip.avi")
    data = whole.read_bytes()
    cut = tmp_path / "cut.avi"
    cut.write_bytes(data[:len(data) // 2])
    assert [i for i, _ in open_source(str(whole)).frames()] == list(range(40))
    src = open_source(str(cut))
    assert src.length == 40                   # what the container declares
    got = []
    with pytest.raises(VideoCutShort, match=r"video .*cut.avi is cut short: it ended after \d+ of the 40 frames"):
        for i, _ in src.frames():
            got.append(i)
    assert 10 <= len(got) < 30 and got == list(range(len(got)))
    assert isinstance(VideoCutShort("x"), BadInput)


def test_ffmpeg_messages_on_a_damaged_video_stay_off_stderr(tmp_path):
    # FFmpeg complains from its decoding thread ("[mjpeg @ 0x...] dqt: invalid
    # len", "overread 8"): a fresh process, as the command line runs
    import subprocess
    import sys
    from pathlib import Path
    whole = _noise_video(tmp_path / "clip.avi")
    data = whole.read_bytes()
    (tmp_path / "cut.avi").write_bytes(data[:len(data) // 2 + 37])
    code = ("from vision.sources import open_source\n"
            f"src = open_source({str(tmp_path / 'cut.avi')!r})\n"
            "try:\n    print(sum(1 for _ in src.frames()))\nexcept Exception as e:\n    print(e)\n")
    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("OPENCV_")}
    proc = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True,
                          timeout=120, env=env)
    assert "is cut short" in proc.stdout
    assert proc.stderr == ""


def test_a_png_frame_cut_short_is_refused_without_libpng_noise(tmp_path, capfd):
    # libpng says "PNG input buffer is incomplete" on stderr itself: with the
    # refusal's own line that made two; a PNG without its IEND chunk is cut short
    from vision.sources import png_complete
    folder, whole = _frames_one_cut_in_half(tmp_path / "frames", ".png")
    assert png_complete(np.frombuffer(whole, np.uint8)) and whole.endswith(b"IEND\xaeB`\x82")
    assert not png_complete(np.frombuffer(whole[:len(whole) // 2], np.uint8))
    src = open_source(str(folder))
    assert [i for i, _ in src.frames(prefetch=0)] == [0, 2]
    assert src.damaged == [1] and src.damaged_why.endswith("f_001.png: the PNG file is cut short (no IEND chunk)")
    assert "libpng" not in capfd.readouterr().err


def test_frames_of_another_size_stop_the_run_naming_the_frame(tmp_path):
    # the referee compares settled frames pixel for pixel and keeps one pose:
    # a frame 960 px wide among 1280 px ones read as "the camera moved"
    folder = _frames(tmp_path / "frames", 3, size=(64, 48))
    assert cv2.imwrite(str(folder / "f_002.png"), np.zeros((48, 48, 3), np.uint8))
    frames = open_source(str(folder)).frames(prefetch=0)
    assert [i for i, _ in [next(frames), next(frames)]] == [0, 1]
    with pytest.raises(BadInput, match=r"frame .*f_002.png is 48x48 px, the frames before it \(f_000.png on\) "
                                       r"64x48: a game's frames come from one camera at one size"):
        next(frames)
    # a small cover picture sorting first: the message names it, as the odd one out
    folder = _frames(tmp_path / "covered", 2, size=(64, 48))
    assert cv2.imwrite(str(folder / "a_cover.png"), np.zeros((18, 32, 3), np.uint8))
    with pytest.raises(BadInput, match=r"f_000.png is 64x48 px, the frame before it \(a_cover.png\) 32x18"):
        list(open_source(str(folder)).frames(prefetch=0))


def test_source_names_a_network_address_an_empty_frame_and_a_stray_space_plainly(tmp_path, monkeypatch):
    # a break-test, session 50: each of these said only "does not exist" or
    # "not an image OpenCV can decode"
    with pytest.raises(BadInput, match=r"^source rtsp://cam.local/live is a network address: streams are not read "
                                       r"directly; record the stream to a video file first"):
        open_source("rtsp://cam.local/live")
    folder = _frames(tmp_path / "frames", 3, size=(64, 48))
    (folder / "f_001.png").write_bytes(b"")
    src = open_source(str(folder))
    assert [i for i, _ in src.frames(prefetch=0)] == [0, 2]
    assert src.damaged_why.endswith("f_001.png: the file is empty (0 bytes)")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(BadInput, match=r"^source 'frames ' does not exist \(the name ends with a space\)"):
        open_source("frames ")
    with pytest.raises(BadInput, match=r"^source nowhere does not exist \(expected a folder"):
        open_source("nowhere")


def test_a_recording_folder_given_for_its_frames_folder_names_it(tmp_path):
    # ~/.cache/companion/demo-v2 for demo-v2/frames: "holds no image frames"
    _frames(tmp_path / "rec" / "frames", 2, size=(64, 48))
    (tmp_path / "rec" / "truth.json").write_text("{}")
    with pytest.raises(BadInput, match=r"holds no image frames \(.*\); its folder .*rec/frames holds frames: give "
                                       r"that folder$"):
        open_source(str(tmp_path / "rec"))


def test_a_source_that_is_not_a_regular_file_is_refused(tmp_path):
    import os
    fifo = tmp_path / "v.avi"
    os.mkfifo(fifo)             # read twice (the look, then the game), it would hang
    with pytest.raises(BadInput, match=r"source .*v.avi is not a regular file \(a pipe or a device\)"):
        open_source(str(fifo))
    with pytest.raises(BadInput, match="is not a regular file"):
        open_source("/dev/zero")


def test_only_ascii_digits_name_a_camera():
    # "²".isdigit() is true, but int("²") raises: it is a (missing) path
    with pytest.raises(BadInput, match=r"source ² does not exist"):
        open_source("²")


def test_the_frame_rate_is_kept_within_a_time_lapse_and_1000():
    from vision.sources import MIN_FPS
    assert MIN_FPS == 0.01
    for fps in (1e-300, 0.005, 1001.0):
        with pytest.raises(BadInput, match=r"bad frame rate .*from 0.01 \(a frame every 100 s\) to 1000"):
            open_source("99", fps=fps)
    # a rate just outside is named as given, not rounded onto the range's ends
    for fps, shown in ((1000.0001, "1000.0001"), (0.0099999, "0.0099999")):
        with pytest.raises(BadInput, match=rf"bad frame rate {shown}: expected"):
            open_source("99", fps=fps)


class _FakeCamera:
    """A camera that gives ``n`` frames as fast as it is read, each frame's
    first pixel holding its number (mod 256)."""

    def __init__(self, n: int) -> None:
        self.n, self.i, self.released = n, 0, False

    def read(self):
        if self.i >= self.n:
            return False, None
        img = np.zeros((4, 6, 3), np.uint8)
        img[0, 0, 0] = self.i % 256
        self.i += 1
        return True, img

    def release(self) -> None:
        self.released = True


def test_a_live_camera_does_not_wait_for_a_slow_reader():
    # a referee slower than its camera (1080p at 60 frames a second on 2
    # cores) read the table later and later; the newest frames are kept and
    # every index stays the camera's own count (a time)
    import time
    from vision.sources import CameraLost, FrameSource
    cam = _FakeCamera(60)
    src = FrameSource("camera", "0", None, 30.0, _cap=cam)
    got = []
    with pytest.raises(CameraLost):          # (this camera stops after 60 frames)
        for index, frame in src.frames(prefetch=2):
            assert frame[0, 0, 0] == index % 256
            got.append(index)
            time.sleep(0.01)
    assert got == sorted(got) and got[-1] == 59 and len(got) + src.dropped == 60 and src.dropped > 0
    assert cam.released


def test_a_video_file_is_read_whole_however_slow_the_reader():
    import time
    from vision.sources import FrameSource
    src = FrameSource("video", "v.mp4", 30, 30.0, _cap=_FakeCamera(30))
    got = []
    for index, _ in src.frames(prefetch=2):
        got.append(index)
        time.sleep(0.002)
    assert got == list(range(30)) and src.dropped == 0


def test_a_frame_clock_numbers_frames_by_their_timestamps():
    # a phone's variable frame rate (session 57, a break-test: 30 s at 5
    # frames a second then 30 s at 30, read frame by frame at the average,
    # gave every later claim to the other player).  At an average of 10 a
    # second: a frame every 200 ms leaves every other number out, frames
    # 33 ms apart that land on a number already given are left out
    from vision.sources import _FrameClock
    clock = _FrameClock(10.0)
    got = [clock.index(read, ms) for read, ms in enumerate([40.0, 240.0, 440.0, 640.0, 673.3, 706.7, 740.0,
                                                             773.3, 806.7, 840.0, 873.3, 906.7, 940.0])]
    assert got == [0, 2, 4, 6, None, 7, None, None, 8, None, None, 9, None]
    assert clock.skipped == 6 and clock.rates() == pytest.approx((5.0, 30.0), rel=0.01)
    # at one rate every frame keeps its own number, and no variable rate is said
    steady = _FrameClock(30.0)
    assert [steady.index(i, 1000.0 * i / 30.0) for i in range(40)] == list(range(40))
    assert steady.skipped == 0 and steady.rates() is None
    # timestamps that stop rising (a stream without them): one after the other from there
    flat = _FrameClock(10.0)
    assert [flat.index(i, ms) for i, ms in enumerate([0.0, 100.0, 100.0, 100.0, 0.0])] == [0, 1, 2, 3, 4]


def test_a_video_at_a_variable_rate_is_timed_by_its_timestamps(tmp_path):
    # 20 frames 200 ms apart, then 60 frames about 33 ms apart (5, then
    # about 30 a second): the frame given as number k is the one the file
    # shows k / average-rate seconds in (its timestamp as OpenCV decodes
    # it), file_frame(k) is its number in the file, and frames that come
    # faster than the average are left out
    import shutil
    import subprocess
    if shutil.which("ffmpeg") is None:
        pytest.skip("ffmpeg is not installed: it makes the variable-rate video this test reads")
    frames = tmp_path / "f"
    frames.mkdir()
    times = [0.2 * k for k in range(20)] + [4.0 + k / 30.0 for k in range(60)]
    listing = []
    for k, t in enumerate(times):
        cv2.imwrite(str(frames / f"{k:03d}.png"), np.full((64, 96, 3), 3 * k, np.uint8))
        listing.append(f"file '{frames / f'{k:03d}.png'}'\nduration "
                       f"{(times[k + 1] - t) if k + 1 < len(times) else 1 / 30:.6f}")
    (tmp_path / "list.txt").write_text("\n".join(listing) + "\n")
    video = tmp_path / "vfr.mp4"
    subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-f", "concat", "-safe", "0", "-i",
                    str(tmp_path / "list.txt"), "-fps_mode", "vfr", "-enc_time_base", "1/1000", "-c:v", "mpeg4",
                    "-q:v", "2", str(video)], check=True)
    cap = cv2.VideoCapture(str(video))
    decoded = []
    while True:
        ok, img = cap.read()
        if not ok:
            break
        decoded.append((cap.get(cv2.CAP_PROP_POS_MSEC) / 1000.0, img))
    cap.release()
    assert len(decoded) == 80
    src = open_source(str(video))
    assert src.timed and src.length == 80
    got = list(src.frames(prefetch=0))
    rate = src.fps
    for k, img in got:
        n = src.file_frame(k)
        shown, own = decoded[n]
        assert np.array_equal(img, own)                                         # the file's frame n
        assert abs(shown - decoded[0][0] - k / rate) <= 0.5 / rate + 1e-6        # shown k / rate seconds in
    assert [src.file_frame(k) for k, _ in got[:3]] == [0, 1, 2] and [k for k, _ in got[:3]] != [0, 1, 2]
    assert src.rates is not None and src.rates[0] == pytest.approx(5.0, rel=0.05) and src.rates[1] > 20
    assert src.skipped == 80 - len(got) > 0
    # given --fps, the frames are counted at that rate, one after the other
    plain = open_source(str(video), fps=12.0)
    assert not plain.timed and [k for k, _ in plain.frames(prefetch=0)] == list(range(80))


def test_frame_names_that_are_no_files_keep_their_numbers_as_frames_not_read(tmp_path):
    # a break-test, session 57: a link to no file (a sync client's
    # placeholder), a folder and a pipe named as frames were left out of
    # the listing, so every later frame's number, and every later event's
    # frame, was 3 too low, with no note; now each keeps its number as a
    # frame that cannot be read (named in the note), and a pipe is never
    # opened (it would wait for ever)
    import os
    folder = _frames(tmp_path / "f", n=7)
    (folder / "f_002.png").unlink()
    (folder / "f_002.png").symlink_to(tmp_path / "gone.png")
    (folder / "f_003.png").unlink()
    (folder / "f_003.png").mkdir()
    (folder / "f_004.png").unlink()
    os.mkfifo(folder / "f_004.png")
    src = open_source(str(folder))
    assert [i for i, _ in src.frames(prefetch=0)] == [0, 1, 5, 6]
    assert src.damaged == [2, 3, 4] and src.damaged_why == f"{folder / 'f_002.png'}: a link to no file"


def test_a_video_with_pixels_not_square_is_read_as_a_player_shows_it(tmp_path):
    # a break-test, session 57: a video stored at 480 x 360 with a sample
    # aspect ratio of 4:3 (every player shows it at 640 x 360) was read
    # squeezed, and gave no event at all
    import shutil
    import subprocess
    from vision.sources import square_pixels
    tall = square_pixels(np.zeros((30, 40, 3), np.uint8), 0.5)
    assert tall.shape == (60, 40, 3) and square_pixels(np.zeros((30, 40, 3), np.uint8), 4 / 3).shape == (30, 53, 3)
    if shutil.which("ffmpeg") is None:
        pytest.skip("ffmpeg is not installed: it makes the anamorphic video this test reads")
    still = tmp_path / "still.png"
    picture = np.zeros((360, 480, 3), np.uint8)
    picture[:, 240:] = 200                          # the right half bright: it stays the right half
    cv2.imwrite(str(still), picture)
    video = tmp_path / "anamorphic.mp4"
    subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-loop", "1", "-i", str(still), "-frames:v", "5",
                    "-vf", "setsar=4/3", "-c:v", "mpeg4", "-q:v", "2", str(video)], check=True)
    src = open_source(str(video))
    assert src.pixel_aspect == pytest.approx(4 / 3)
    frames = [img for _, img in src.frames(prefetch=0)]
    assert len(frames) == 5 and frames[0].shape == (360, 640, 3)
    assert frames[0][:, :300].mean() < 30 and frames[0][:, 340:].mean() > 170


def test_a_videos_container_tells_whether_the_file_is_whole(tmp_path):
    # the frame count a container declares is an estimate in some files (an
    # MKV or TS whose audio runs longer) or counts frames an edit list hides
    # (an MP4 trimmed with ffmpeg -c copy): such whole files were "cut
    # short", exit 2 (a break-test, session 57).  Their boxes, chunks or
    # Segment say whether the file is whole
    from vision.sources import container_whole
    avi = _noise_video(tmp_path / "clip.avi", n=20)
    cut = tmp_path / "cut.avi"
    cut.write_bytes(avi.read_bytes()[: avi.stat().st_size // 2])
    assert container_whole(avi) is True and container_whole(cut) is False
    mp4 = tmp_path / "clip.mp4"
    writer = cv2.VideoWriter(str(mp4), cv2.VideoWriter_fourcc(*"mp4v"), 10.0, (64, 48))
    if writer.isOpened():
        for k in range(20):
            writer.write(np.full((48, 64, 3), 10 * k, np.uint8))
        writer.release()
        half = tmp_path / "half.mp4"
        half.write_bytes(mp4.read_bytes()[: mp4.stat().st_size - 100])
        assert container_whole(mp4) is True and container_whole(half) is False
    # Matroska: an EBML header of 4 bytes of data, then a Segment of 6
    # holding a Void element of 4 (RFC 9559)
    mkv = tmp_path / "clip.mkv"
    header = b"\x1a\x45\xdf\xa3\x84" + b"\x42\x86\x81\x01"
    void = b"\xec\x84" + b"\x01" * 4
    mkv.write_bytes(header + b"\x18\x53\x80\x67\x86" + void)
    assert container_whole(mkv) is True
    mkv.write_bytes(header + b"\x18\x53\x80\x67\x86" + void[:3])             # cut inside the Segment
    assert container_whole(mkv) is False
    mkv.write_bytes(header + b"\x18\x53\x80\x67\xff" + void)                 # a Segment of unknown size
    assert container_whole(mkv) is None
    mkv.write_bytes(header + b"\x18\x53\x80\x67\x86" + b"\x12\x34\x56\x78\x81\x01")   # no Segment element
    assert container_whole(mkv) is False
    # a copy cut at 60 % and filled to its size with zeros (space taken
    # before the bytes came: a break-test, session 57) does not tell; one
    # filled with other bytes breaks the chain of chunks
    data = avi.read_bytes()
    k = len(data) * 6 // 10
    padded = tmp_path / "padded.avi"
    padded.write_bytes(data[:k] + bytes(len(data) - k))
    assert container_whole(padded) is None
    padded.write_bytes(data[:k] + bytes(np.random.default_rng(1).integers(0, 256, len(data) - k, np.uint8)))
    assert container_whole(padded) is False
    # an MPEG-TS has no sizes: whole where it is a whole number of 188-byte
    # packets whose sync bytes (0x47) are still in step at its end
    ts = tmp_path / "clip.ts"
    rng = np.random.default_rng(2)
    packets = b"".join(b"\x47" + bytes(rng.integers(0, 256, 187, np.uint8)) for _ in range(40))
    ts.write_bytes(packets)
    assert container_whole(ts) is True
    ts.write_bytes(packets[:-100])                                    # stopped inside a packet
    assert container_whole(ts) is False
    ts.write_bytes(packets[: 188 * 25] + bytes(rng.integers(1, 71, 188 * 15, np.uint8)))   # other bytes past a cut
    assert container_whole(ts) is False
    ts.write_bytes(b"\x47" + bytes(187))                               # too short to tell
    assert container_whole(ts) is None


def test_a_whole_mp4_trimmed_without_reencoding_is_not_cut_short(tmp_path):
    # ffmpeg -ss 1 -c copy keeps the frames before the cut and hides them
    # with an edit list: OpenCV's count holds them, its reading does not
    import shutil
    import subprocess
    if shutil.which("ffmpeg") is None:
        pytest.skip("ffmpeg is not installed: it trims the video this test reads")
    encoders = subprocess.run(["ffmpeg", "-hide_banner", "-encoders"], capture_output=True, text=True).stdout
    if "libx264" not in encoders:
        pytest.skip("ffmpeg has no libx264: the H.264 video this test trims cannot be made")
    from vision.sources import cut_short
    whole = _noise_video(tmp_path / "clip.avi", n=100, fps=10.0)
    mp4 = tmp_path / "clip.mp4"
    subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-i", str(whole), "-c:v", "libx264",
                    "-preset", "ultrafast", "-bf", "2", "-g", "100", str(mp4)], check=True)
    trimmed = tmp_path / "trimmed.mp4"
    subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-ss", "4", "-i", str(mp4), "-c", "copy",
                    str(trimmed)], check=True)
    src = open_source(str(trimmed))
    got = list(src.frames(prefetch=0))          # no VideoCutShort
    assert cut_short(len(got), src.length), (len(got), src.length)      # (the count holds the hidden frames)
    assert 0 < len(got) < 100


def test_standard_input_a_negative_camera_and_a_file_address_are_named(tmp_path):
    # a break-test, session 57: each was "does not exist", or "a network address"
    video = _noise_video(tmp_path / "clip.avi", n=5)
    for spec, says in (("-", "source - (standard input) is not read: give a video file, a folder of frames or a "
                             "camera index"),
                       ("-1", "source -1 is no camera: camera indices are 0 or more (0 is the first camera)"),
                       (f"file://{video}", f"source file://{video} is a file: address: give the file's path itself, "
                                           f"{video}"),
                       (f"FILE://localhost{str(video).replace('clip', '%63lip')}",
                        f"source FILE://localhost{str(video).replace('clip', '%63lip')} is a file: address: give the "
                        f"file's path itself, {video}")):
        with pytest.raises(BadInput) as exc:
            open_source(spec)
        assert str(exc.value) == says
