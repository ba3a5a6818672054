"""``IRModule`` (hir.md §modules): construction checks, dotted constant names, children."""

import pytest

from tfexec import ConstTensor, Function, IRConstructionError, IRModule, Var, f32, i64, ops


def _fn(name: str = "forward", const: str | None = None) -> Function:
    x = Var("x", f32[4])
    body = ops.mul(x, ConstTensor(const, f32[4])) if const is not None else ops.neg(x)
    return Function(name, (x,), body)


def _tree() -> IRModule:
    attn = IRModule({"forward": _fn(const="wq")}, {"wq": f32[4]}, entry="forward")
    block = IRModule({"forward": _fn(const="g")}, {"g": f32[4]}, children={"attn": attn})
    return IRModule({"main": _fn("main")}, {"embed": i64[8]}, entry="main", children={"block": block})


def test_constant_type_resolves_own_and_dotted_child_names() -> None:
    top = _tree()
    assert top.constant_type("embed") == i64[8]
    assert top.constant_type("block.g") == f32[4]
    assert top.constant_type("block.attn.wq") == f32[4]
    assert top.child("block").constant_type("attn.wq") == f32[4]


@pytest.mark.parametrize("name", ["nope", "block.nope", "nope.g", "block.attn", "block.attn.wq.x", ""])
def test_constant_type_of_an_undeclared_name_is_none(name: str) -> None:
    assert _tree().constant_type(name) is None


def test_all_constants_uses_state_dict_names() -> None:
    assert _tree().all_constants() == {"embed": i64[8], "block.g": f32[4], "block.attn.wq": f32[4]}


def test_walk_yields_every_module_with_its_dotted_path() -> None:
    top = _tree()
    walked = list(top.walk())
    assert [p for p, _ in walked] == ["", "block", "block.attn"]
    assert walked[2][1] is top.child("block.attn")


def test_flat_module_may_declare_dotted_constant_names() -> None:
    # a flat module bound straight to a state_dict ("0.weight") is fine
    m = IRModule({"forward": _fn(const="0.weight")}, {"0.weight": f32[4]})
    assert m.constant_type("0.weight") == f32[4]
    assert m.all_constants() == {"0.weight": f32[4]}


def test_dotted_constant_colliding_with_a_child_constant_is_refused() -> None:
    block = IRModule({}, {"g": f32[4]})
    with pytest.raises(IRConstructionError, match=r"constant 'block.g' is declared both by this module and by its child 'block'"):
        IRModule({}, {"block.g": f32[4]}, children={"block": block})
    # a dotted name that only shares the child's prefix is not a collision
    IRModule({}, {"block.h": f32[4]}, children={"block": block})


def test_entry_must_name_a_function() -> None:
    with pytest.raises(IRConstructionError, match=r"IRModule.entry 'run' is not one of its functions \(forward\)"):
        IRModule({"forward": _fn()}, entry="run")


def test_child_names_must_not_contain_dots_and_must_be_modules() -> None:
    with pytest.raises(IRConstructionError, match=r"child module name 'a.b' must not contain '.'"):
        IRModule({}, children={"a.b": IRModule({})})
    with pytest.raises(IRConstructionError, match=r"IRModule.children\['a'\] must be an IRModule, got dict"):
        IRModule({}, children={"a": {}})  # type: ignore[dict-item]


def test_constants_must_be_tensor_types_and_functions_functions() -> None:
    with pytest.raises(IRConstructionError, match=r"IRModule.constants\['w'\] must be a TensorType"):
        IRModule({}, {"w": "f32[4]"})  # type: ignore[dict-item]
    with pytest.raises(IRConstructionError, match=r"IRModule.functions\['f'\] must be a Function, got str"):
        IRModule({"f": "def f(): ..."})  # type: ignore[dict-item]


def test_functions_are_listed_under_their_own_names() -> None:
    with pytest.raises(IRConstructionError, match=r"IRModule.functions\['main'\] is a Function named 'forward'"):
        IRModule({"main": _fn("forward")})


def test_function_and_child_lookups_list_what_exists() -> None:
    top = _tree()
    assert top.function("main").name == "main"
    with pytest.raises(KeyError, match=r"no function 'run' in this module \(functions: main\)"):
        top.function("run")
    with pytest.raises(KeyError, match=r"no child module 'mlp' in 'block.mlp' \(children: attn\)"):
        top.child("block.mlp")
