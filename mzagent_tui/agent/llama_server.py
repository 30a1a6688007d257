"""`python -m mzagent_tui.agent.llama_server ARGS`: llama_cpp.server without ggml's extra CPU
buffer types.

ggml moves weights into "extra" buffers for AMX tiles and repacked quantised blocks when the CPU
reports those features. On a virtual machine that reports AMX, the AMX matrix multiply crashed
the server (SIGSEGV in `ggml_backend_amx_mul_mat`) on its first reply, for a wheel built on that
same machine. llama.cpp has a switch for it (`use_extra_bufts` in the model parameters) that
llama-cpp-python does not expose, so its default parameters are wrapped before the server
loads the model. Plain AVX2/AVX-512 kernels remain: prompt speed measured the same (1,206 tokens
in 20.4 s, against 59 tokens/s before) on the development machine.
"""

from __future__ import annotations

import sys


def without_extra_buffers() -> None:
    """Make every model load with `use_extra_bufts = False`."""
    import llama_cpp.llama_cpp as low

    defaults = low.llama_model_default_params

    def params():  # noqa: ANN202 - a ctypes struct
        value = defaults()
        value.use_extra_bufts = False
        return value

    low.llama_model_default_params = params


def main() -> None:
    without_extra_buffers()
    from llama_cpp.server.__main__ import main as serve

    sys.argv[0] = "llama_cpp.server"
    serve()


if __name__ == "__main__":
    main()
