"""tilefoundry.dsl defines its function names from the library's list
(tf_surface_function_name), so an op added to the library needs no edit here."""
import pytest

from tilefoundry import _lib, dsl

# The list dsl.py kept by hand before the library listed the names.
HAND_KEPT = (
    "add sub mul div minimum maximum cmp_eq cmp_ne cmp_lt cmp_le cmp_gt cmp_ge "
    "logical_and logical_or logical_xor "
    "neg abs logical_not rsqrt sqrt exp log exp2 log2 ceil floor round square sin cos "
    "reshape cast gather zeros sum mean amax abs_max reduce insert_slice cache_update topk "
    "transpose slice concat stack shape_of rank "
    "matmul conv2d relu sigmoid tanh softmax layer_norm gelu silu rms_norm rope "
    "shape_extract shape_compose reshard local tile load_tile"
).split()


def test_every_name_the_library_lists_is_a_dsl_function():
    names = _lib.surface_function_names()
    assert len(names) == len(set(names)), names
    assert dsl.SURFACE_FUNCTIONS == names
    for name in names:
        assert callable(getattr(dsl, name)) and name in dsl.__all__, name


def test_the_names_once_kept_by_hand_are_all_listed():
    assert sorted(set(HAND_KEPT) - set(dsl.SURFACE_FUNCTIONS)) == []


def test_a_surface_function_only_has_meaning_inside_a_func():
    with pytest.raises(TypeError, match=r"rms_norm\(\) is a TileFoundry DSL operation"):
        dsl.rms_norm(1, 2)
