"""The README's example runs as written."""
import os
import re

README = os.path.join(os.path.dirname(__file__), os.pardir, "README.md")


def test_readme_first_example_runs():
    with open(README) as f:
        text = f.read()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, "README.md has no python example"
    scope = {}
    exec(compile(blocks[0], "README.md example", "exec"), scope)
    assert float(scope["loss"].mean().asscalar()) < 2.3     # below chance after one epoch
