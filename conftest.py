"""Repository-wide pytest set-up.

nbval runs cells with ``store_history=False``, and IPython then ignores a
trailing ``;``, so a cell like ``chart;`` would print the value it hides in
JupyterLab. Notebooks are written for JupyterLab, so run cells the way
JupyterLab does (history on), and the semicolon means the same in both.
"""

try:
    from nbval.kernel import RunningKernel
except ImportError:  # nbval is a test extra; plain unit-test runs do not need it
    RunningKernel = None

if RunningKernel is not None:

    def _execute_cell_input(self, cell_input, allow_stdin=None):
        return self.kc.execute(cell_input, store_history=True, allow_stdin=allow_stdin, stop_on_error=False)

    RunningKernel.execute_cell_input = _execute_cell_input
