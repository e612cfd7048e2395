"""abi/abi.py: the ABI baseline check of `make test` fails on any change of the
public header's surface without a version bump, and `make abi-baseline`
refuses to record a change whose bump is too small."""
import importlib.util
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HEADER = REPO / "include" / "tilefoundry" / "tilefoundry.h"
_spec = importlib.util.spec_from_file_location("tf_abi", REPO / "abi" / "abi.py")
abi = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(abi)


@pytest.fixture
def tree(tmp_path):
    """A scratch copy of the header and of a baseline recorded from it."""
    header, baseline = tmp_path / "tilefoundry.h", tmp_path / "baseline.txt"
    header.write_text(HEADER.read_text())
    abi.write_baseline(str(baseline), *abi.surface(header.read_text()))
    return header, baseline, tmp_path / "symbols.txt"


def edit(header, old, new):
    text = header.read_text()
    assert old in text
    header.write_text(text.replace(old, new, 1))


def set_version(header, major, minor):
    text = re.sub(r"#define TF_VERSION_MAJOR \d+", "#define TF_VERSION_MAJOR %d" % major,
                  header.read_text())
    header.write_text(re.sub(r"#define TF_VERSION_MINOR \d+", "#define TF_VERSION_MINOR %d" % minor,
                             text))


NEW_FN = "TF_API void tf_string_free(char* s);\nTF_API uint32_t tf_new_call(void);"


def test_checked_in_baseline_matches_the_header():
    assert abi.check(str(HEADER), str(REPO / "abi" / "baseline.txt")) == 0


def test_checked_in_symbols_are_the_header_functions():
    _, lines = abi.surface(HEADER.read_text())
    assert (REPO / "abi" / "symbols.txt").read_text().split() == abi.functions(lines)


def test_added_function_without_bump_fails(tree, capsys):
    header, baseline, symbols = tree
    edit(header, "TF_API void tf_string_free(char* s);", NEW_FN)
    assert abi.check(str(header), str(baseline)) == 1
    assert "+ function uint32_t tf_new_call(void)" in capsys.readouterr().out
    assert abi.update(str(header), str(baseline), str(symbols)) == 1


def test_changed_struct_field_fails(tree, capsys):
    header, baseline, _ = tree
    edit(header, "uint32_t reserved[5];", "uint32_t reserved[4];")
    assert abi.check(str(header), str(baseline)) == 1
    assert "reserved[5]" in capsys.readouterr().out


def test_changed_enum_value_fails(tree):
    header, baseline, _ = tree
    edit(header, "TF_ERR_INTERNAL = 9,", "TF_ERR_INTERNAL = 11,")
    assert abi.check(str(header), str(baseline)) == 1


def test_appended_enum_value_is_an_addition(tree, capsys):
    header, baseline, symbols = tree
    (major, minor), _ = abi.read_baseline(str(baseline))
    edit(header, "TF_ERR_INVALID_HANDLE = 10", "TF_ERR_INVALID_HANDLE = 10,\n  TF_ERR_NEW = 11")
    assert abi.check(str(header), str(baseline)) == 1  # still needs a bump
    set_version(header, major, minor + 1)
    assert abi.update(str(header), str(baseline), str(symbols)) == 0
    assert "enum tf_status TF_ERR_NEW = 11" in baseline.read_text()
    # A value changed is not: the old value's line is gone.
    edit(header, "TF_ERR_NEW = 11", "TF_ERR_NEW = 12")
    set_version(header, major, minor + 2)
    assert abi.update(str(header), str(baseline), str(symbols)) == 1
    assert "- enum tf_status TF_ERR_NEW = 11" in capsys.readouterr().out


def test_baseline_with_whole_enum_lines_reads_per_value(tree):
    header, baseline, _ = tree
    text = baseline.read_text()
    values = [l for l in text.splitlines() if l.startswith("enum tf_backend ")]
    whole = "type typedef enum tf_backend{%s}tf_backend;" % ",".join(l.split(" ", 2)[2] for l in values)
    baseline.write_text("\n".join(l for l in text.splitlines() if l not in values) + "\n" + whole + "\n")
    assert abi.check(str(header), str(baseline)) == 0


def test_addition_with_minor_bump_is_recorded(tree):
    header, baseline, symbols = tree
    (major, minor), _ = abi.read_baseline(str(baseline))
    edit(header, "TF_API void tf_string_free(char* s);", NEW_FN)
    set_version(header, major, minor + 1)
    assert abi.update(str(header), str(baseline), str(symbols)) == 0
    assert abi.check(str(header), str(baseline)) == 0
    assert "tf_new_call" in symbols.read_text().split()


def test_removal_needs_a_major_bump(tree, capsys):
    header, baseline, symbols = tree
    (major, minor), _ = abi.read_baseline(str(baseline))
    edit(header, "TF_API void tf_string_free(char* s);", "")
    set_version(header, major, minor + 1)
    assert abi.update(str(header), str(baseline), str(symbols)) == 1
    assert "without a major version bump" in capsys.readouterr().out
    set_version(header, major + 1, 0)
    assert abi.update(str(header), str(baseline), str(symbols)) == 0


def test_comment_only_change_is_not_an_abi_change(tree):
    header, baseline, _ = tree
    edit(header, "/* --- modules", "/* A new comment. */\n/* --- modules")
    assert abi.check(str(header), str(baseline)) == 0


def test_unreleased_version_may_grow_without_a_bump(tree):
    header, baseline, symbols = tree
    edit(header, "TF_API void tf_string_free(char* s);", NEW_FN)
    assert abi.update(str(header), str(baseline), str(symbols)) == 1
    assert abi.update(str(header), str(baseline), str(symbols), unreleased=True) == 0
    assert abi.check(str(header), str(baseline)) == 0
