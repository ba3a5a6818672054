"""ParseError messages: ``file:line:col: message``, the source line and a caret, and what
was expected. Statements and expressions outside the subset are refused and nothing in
the text is ever executed."""

import builtins
from pathlib import Path

import pytest

from tfexec import ParseError
from tfexec.text import parse, parse_function


def _fn(body: str, params: str = "x: f32[4, 4]") -> str:
    return f"def f({params}) -> f32[4, 4]:\n" + "".join(f"    {line}\n" for line in body.splitlines())


def test_full_message_format() -> None:
    with pytest.raises(ParseError) as info:
        parse(_fn("h = matmull(x, x)\nreturn h"), "m.tf.py")
    assert str(info.value) == (
        "m.tf.py:2:9: unknown op `matmull`; did you mean matmul or mul or all?\n"
        "        h = matmull(x, x)\n"
        "            ^~~~~~~"
    )


CASES = [
    # unknown names and ops, with suggestions
    (_fn("return softmx(x)"), r"2:12: unknown op `softmx`; did you mean softmax\b"),
    (_fn("return add(x, xx)"), r"2:19: unknown name `xx`; did you mean x\?"),
    (_fn("return exec('import os')"), r"2:12: unknown op `exec`"),
    (_fn("return __import__('os')"), r"2:12: unknown op `__import__`"),
    # attributes
    (_fn("return reduce(x, kind='sum', axis=1)"), r"reduce has no attribute `axis`; valid attributes: kind, axes, keepdims"),
    (_fn("return reduce(x, kind='sum', axes=1)"), r"reduce attribute `axes` expects a tuple, each item an int, or None, got `1`"),
    (_fn("return reduce(x, kind='total')"), r"reduce attribute `kind` expects one of 'sum', 'mean', 'max', 'min', 'prod', got `'total'`"),
    (_fn("return gelu(x, approximate=True)"), r"gelu attribute `approximate` expects one of 'none', 'tanh'"),
    (_fn("return cast(x, dtype=float32)"), r"cast attribute `dtype` expects a dtype \(b1, i8, i16, i32, i64, u8, f16, bf16, f32, f64\)"),
    (_fn("return cast(x)"), r"cast needs attribute\(s\) dtype \(a dtype"),
    (_fn("return reshape(x, shape=(4, x))"), r"2:33: `x` is a value here, but a dim is static"),
    (_fn("return reshape(x, shape=(4, 4.5))"), r"a dim must be an int, a DimVar name or dim arithmetic, got `4.5`"),
    (_fn("return reshard(x, layout=Layout(4))"), r"Layout field `shape` expects a tuple, each item a dim"),
    (_fn("return reshard(x, layout=Mesh((2,), ('x',)))"), r"reshard attribute `layout` expects Layout\(...\), or ShardLayout\(...\), or None"),
    (_fn("return reduce(x, kind='sum', kind='max')"), r"keyword argument repeated|given twice"),
    (_fn("return transpose(x, perm=(0, 1), **kw)"), r"plain arguments"),
    (_fn("return add(x)"), r"2:12: add takes 2 operand\(s\), got 1"),
    # types and dims
    (_fn("return x", "x: g32[4, 4]"), r"1:10: unknown dtype `g32`"),
    (_fn("return x", "x: f32[-1]"), r"negative size"),
    (_fn("return x", "x"), r"parameter x needs a type"),
    (_fn("return x", "x: f32[4] @ Layout((4,)) @ Layout((4,))"), r"applies to one tensor type without a layout"),
    (_fn("return x", "x: list[int]"), r"unknown dtype `list`; expected one of b1, i8"),
    (_fn("return x", "x: 4"), r"expected a type such as f32\[B, 64\]"),
    (_fn("return x", "x: f32[4], x: f32[4]"), r"duplicate argument|declared twice"),
    (_fn("return x", "x: f32[4] = 1"), r"no defaults"),
    (_fn("return x", "*x: f32[4]"), r"no defaults, \*"),
    # operators and other expressions
    (_fn("return x + x"), r"operators are not part of the HIR text form; write add\(\.\.\.\)"),
    (_fn("return -x"), r"write neg"),
    (_fn("return x < x"), r"comparisons .*; write lt\(a, b\)"),
    (_fn("return (lambda y: y)(x)"), r"only ops and functions of this module are called"),
    (_fn("y = lambda z: z\nreturn x"), r"lambda is not part of the HIR text form"),
    (_fn("return [x]"), r"lists are only data inside constant"),
    (_fn("return 'x'"), r"str literal 'x' is not a value"),
    (_fn("return None"), r"NoneType literal None"),
    (_fn("return {x: x}"), r"`Dict` expressions are not part"),
    (_fn("return x if x else x"), r"`IfExp` expressions"),
    (_fn("return [y for y in x]"), r"lists are only data|`ListComp`"),
    (_fn("return f'{x}'"), r"`JoinedStr` expressions"),
    (_fn("return x.T"), r"`x` is a value; attribute access"),
    (_fn("return x[0:1]"), r"non-negative int index"),
    (_fn("return x[-1]"), r"non-negative int index"),
    (_fn("return add"), r"`add` is a function; call it"),
    (_fn("return constant(x, dtype=f32)"), r"constant data must be numbers"),
    (_fn("return constant([1, [2]], dtype=f32)"), r"cannot make an f32 tensor of this data"),
    (_fn("return constant(1.0)"), r"exactly one of dtype= .* or type="),
    (_fn("return constant([1.0, 2.0], dtype=f32, shape=(3,))"), r"cannot make an f32 tensor"),
    (_fn("return const('w')"), r"const takes a key and a type"),
    (_fn("return float('abc')"), r"float\(\) cannot read 'abc'"),
    # statements
    (_fn("import os\nreturn x"), r"2:5: import statements are not part of the HIR text form: nothing is imported or executed"),
    ("import os\n", r"1:1: import statements"),
    ("from os import system\n", r"import statements"),
    (_fn("while x:\n    pass\nreturn x"), r"while loops are not part of the HIR text form"),
    (_fn("if x:\n    pass\nreturn x"), r"if statements .* where\(cond, a, b\)"),
    (_fn("with x:\n    pass\nreturn x"), r"with statements"),
    (_fn("try:\n    pass\nexcept E:\n    pass\nreturn x"), r"try statements"),
    (_fn("x += x\nreturn x"), r"augmented assignment"),
    (_fn("del x\nreturn x"), r"del statements"),
    (_fn("global x\nreturn x"), r"global statements"),
    (_fn("assert x\nreturn x"), r"assert statements"),
    (_fn("raise x\nreturn x"), r"raise statements"),
    (_fn("pass\nreturn x"), r"pass statements"),
    (_fn("exec('x')\nreturn x"), r"an expression statement does nothing"),
    (_fn("y: f32[4] = x\nreturn y"), r"annotated assignment is only for module constants"),
    (_fn("a = b = x\nreturn a"), r"chained assignment"),
    (_fn("x[0] = x\nreturn x"), r"the target of an assignment is a name"),
    (_fn("add = neg(x)\nreturn add"), r"cannot bind 'add': `add` is an op name"),
    (_fn("f32 = neg(x)\nreturn x"), r"`f32` is a dtype"),
    (_fn("return x\ny = x"), r"3:5: statement after return"),
    (_fn("y = neg(x)"), r"function f has no return statement"),
    (_fn("return"), r"return needs a value"),
    ("x = 1\n", r"assignments are not allowed at module level"),
    ("print('hi')\n", r"an expression statement does nothing at module level"),
    ("async def f(x: f32[4]) -> f32[4]:\n    return x\n", r"async functions"),
    ("class m(Base):\n    pass\n", r"plain `class name:` block"),
    ("@staticmethod\ndef f(x: f32[4]) -> f32[4]:\n    return x\n", r"the only decorator is @entry"),
    ("@entry\ndef f(x: f32[4]) -> f32[4]:\n    return x\n@entry\ndef g(x: f32[4]) -> f32[4]:\n    return x\n", r"two entry functions: f and g"),
    ("def f(x: f32[4]) -> f32[4]:\n    return x\ndef f(x: f32[4]) -> f32[4]:\n    return x\n", r"3:1: `f` is already defined at line 1"),
    ("def add(x: f32[4]) -> f32[4]:\n    return x\n", r"cannot define 'add'"),
    ("def f(x: f32[4]) -> f32[4]:\n    return g(x)\ndef g(x: f32[4]) -> f32[4]:\n    return f(x)\n", r"recursive call \(f -> g -> f\)"),
    ("def f(x: f32[4]) -> f32[4]:\n    return f(x)\n", r"2:12: recursive call of f: recursion is not supported"),
    ("def f(x: f32[4]) -> f32[4]:\n    return x\ndef g(x: f32[4]) -> f32[4]:\n    return f(x, x)\n", r"f\(x\) takes 1 argument\(s\), got 2"),
    ("w = const()\n", r"assignments are not allowed"),
    ("w: f32[4] = 1\n", r"declared as `name: f32\[...\] = const\(\)`"),
    ("w: (f32[4],) = const()\n", r"a module constant is a tensor"),
    ("w: f32[4] = const()\nw: f32[4] = const()\n", r"`w` is already defined at line 1"),
    ("a: f32[4] = const('k')\nb: f32[4] = const('k')\n", r"constant 'k' is declared twice"),
    ("w: f32[4] = const()\ndef f(x: f32[4]) -> f32[4]:\n    return add(x, v.w)\n", r"no constant `v.w`"),
    ("class c:\n    w: f32[4] = const()\ndef f(x: f32[4]) -> f32[4]:\n    return add(x, c)\n", r"`c` is a child module"),
    # loops
    (_fn("for k, acc in grid(4, x):\n    y = neg(acc)\nreturn acc"), r"a loop body must end with carry\(acc\)"),
    (_fn("for k, acc in grid(4, x):\n    carry(acc, acc)\nreturn acc"), r"carry\(\.\.\.\) needs one value per carry \(acc\), got 2"),
    (_fn("for k, acc in grid(4, x):\n    value(acc)\nreturn acc"), r"a loop with carries ends with carry\(acc\)"),
    (_fn("for k, out in grid(4):\n    carry(x)\nreturn out"), r"a loop without carries ends with value\(expr\)"),
    (_fn("for k, acc in grid(4, x):\n    carry(acc)\n    y = x\nreturn acc"), r"carry\(\.\.\.\) / value\(\.\.\.\) must be the last statement"),
    (_fn("carry(x)\nreturn x"), r"must be the last statement of a loop body"),
    (_fn("for k, acc in grid(4, x):\n    return acc\nreturn acc"), r"return inside a loop"),
    (_fn("for k, acc in grid(4, x):\n    t = neg(acc)\n    carry(t)\nreturn t"), r"`t` was bound inside the loop at line 2 and is not visible after it"),
    (_fn("for k, acc in range(4):\n    carry(acc)\nreturn acc"), r"a loop iterates over grid\(extent, \*init_values\)"),
    (_fn("for acc in grid(4, x):\n    carry(acc)\nreturn acc"), r"the loop target is the index, then the carry names: `for k, acc in grid\(n, acc0\)`"),
    (_fn("for k, (a, b) in grid(4, x):\n    carry(a)\nreturn a"), r"grid\(\.\.\.\) has 1 init value\(s\) but the target names 2"),
    (_fn("for k, k in grid(4, x):\n    carry(k)\nreturn x"), r"distinct names"),
    (_fn("for k, acc in grid(x, x):\n    carry(acc)\nreturn acc"), r"`x` is a value here, but a dim is static"),
    (_fn("for k, acc in grid(4, x, types=(f32[4],), bad=1):\n    carry(acc)\nreturn acc"), r"grid\(\.\.\.\) has no keyword 'bad'"),
    (_fn("for k, acc in grid(4, x, types=()):\n    carry(acc)\nreturn acc"), r"types= gives one type per carry"),
    (_fn("for k, acc in grid(4, matmul(x, full(shape=(3,), value=0, dtype=f32))):\n    carry(acc)\nreturn acc"),
     r"cannot infer the carried types from the init values \(.*matmul.*\); give them: grid\(\.\.\., types=\(\.\.\.\)\)"),
    (_fn("for k, acc in grid(4, x):\n    carry(acc)\nelse:\n    pass\nreturn acc"), r"for \.\.\. else"),
    (_fn("return grid(4, x)"), r"grid\(\.\.\.\) is only valid as `for k, acc in grid\(n, acc0\):`"),
    (_fn("y = (z := x)\nreturn y"), r"`:=` is only valid around grid"),
    # syntax
    (_fn("return add(x,"), r"invalid syntax"),
    ("def f(x: f32[4]) -> f32[4]:\nreturn x\n", r"2:1: invalid syntax: expected an indented block"),
    ("\x00", r"1:1: cannot parse the text|invalid syntax"),
]


@pytest.mark.parametrize("text, pattern", CASES)
def test_parse_error_messages(text: str, pattern: str) -> None:
    with pytest.raises(ParseError, match=pattern):
        parse(text, "case.tf.py")


def test_every_error_names_the_file_and_a_position() -> None:
    for text, _ in CASES:
        with pytest.raises(ParseError) as info:
            parse(text, "case.tf.py")
        assert str(info.value).startswith("case.tf.py:"), str(info.value)


def test_parse_function_selection() -> None:
    two = "def f(x: f32[4]) -> f32[4]:\n    return x\ndef g(x: f32[4]) -> f32[4]:\n    return f(x)\n"
    assert parse_function(two, name="g").name == "g"
    with pytest.raises(ParseError, match=r"defines 2 functions \(f, g\); pass name= or mark one @entry"):
        parse_function(two)
    with pytest.raises(ParseError, match=r"no function 'h' in the text \(functions: f, g\)"):
        parse_function(two, name="h")
    assert parse_function("@entry\n" + two).name == "f"


def test_nothing_in_the_text_is_executed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = tmp_path / "ran"

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the parser executed user text")

    monkeypatch.setattr(builtins, "exec", refuse)
    monkeypatch.setattr(builtins, "eval", refuse)
    hostile = [
        f"import os\nos.system('touch {marker}')\n",
        f"def f(x: f32[4]) -> f32[4]:\n    __import__('os').system('touch {marker}')\n    return x\n",
        f"def f(x: f32[4]) -> f32[4]:\n    y = exec(\"open('{marker}', 'w')\")\n    return x\n",
        f"def f(x: f32[4]) -> f32[4]:\n    y = eval(\"open('{marker}', 'w')\")\n    return x\n",
        f"def f(x: f32[__import__('os').system('touch {marker}')]) -> f32[4]:\n    return x\n",
        f"def f(x: f32[4]) -> f32[4]:\n    return reshape(x, shape=(open('{marker}', 'w'),))\n",
        f"w: f32[4] = open('{marker}', 'w')\n",
        f"class m:\n    open('{marker}', 'w')\n",
    ]
    for text in hostile:
        with pytest.raises(ParseError):
            parse(text)
    assert not marker.exists()


def test_deep_nesting_is_a_parse_error_not_a_crash() -> None:
    deep = "neg(" * 150 + "x" + ")" * 150
    with pytest.raises(ParseError, match="nested more than 100 levels|too many nested|nested too deeply"):
        parse(_fn(f"return {deep}"))
    with pytest.raises(ParseError):
        parse(_fn("return " + "(" * 500 + "x" + ")" * 500))
