"""`python -m mzagent_tui.agent.model.llama_server ARGS`: the offline model's server, in a process
of its own, from one of two engines with the same settings.

The wheel carries upstream's `llama-server` (OpenAI-compatible chat completions with streaming,
GBNF grammars, the prompt cache kept in the slot across requests) compiled for AVX2, so a
newcomer installs it in seconds with no compiler. `xllamacpp.Server` loads the model and starts
listening when it is made; this process then only waits until it is told to stop (SIGTERM from
`LocalServer.stop`, or SIGKILL through the parent-death signal when the app dies).

`--engine compiled` runs llama-cpp-python's server instead (the `compiled` extra, built on this
machine with its CPU's instructions: AVX-512 and AMX where it has them). Its model loader puts
weights in AMX's repacked buffers when the CPU reports AMX, and its server then crashed on the
first reply (SIGSEGV) on the machines measured; so on such a CPU the extra buffers are turned
off, as the project always ran it.
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mzagent_tui.agent.model.llama_server")
    parser.add_argument("--engine", choices=("prebuilt", "compiled"), default="prebuilt")
    parser.add_argument("--model", required=True)
    parser.add_argument("--alias", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ctx", type=int, required=True)
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--batch", type=int, required=True)
    parser.add_argument("--flash-attn", choices=("on", "off"), required=True)
    parser.add_argument("--mmap", choices=("on", "off"), required=True)
    return parser


def params(argv: list[str] | None = None):  # noqa: ANN201 - xllamacpp.CommonParams, imported late
    """The server's parameters. One slot (one conversation: its KV cache is the prompt cache),
    no host-memory prompt cache beside it (llama-server's default keeps up to 8 GB of old
    prompts), no mlock."""
    import xllamacpp

    args = _parser().parse_args(argv)
    p = xllamacpp.CommonParams()
    p.model.path = args.model
    p.model_alias = {args.alias}
    p.hostnames = ["127.0.0.1"]
    p.port = args.port
    p.n_ctx = args.ctx
    p.n_parallel = 1
    p.n_batch = p.n_ubatch = args.batch
    p.cpuparams.n_threads = p.cpuparams_batch.n_threads = args.threads
    p.n_threads_http = 2
    p.cache_prompt = True
    p.cache_ram_mib = 0
    flash = xllamacpp.llama_flash_attn_type
    p.flash_attn_type = flash.LLAMA_FLASH_ATTN_TYPE_ENABLED if args.flash_attn == "on" else flash.LLAMA_FLASH_ATTN_TYPE_DISABLED
    load = xllamacpp.llama_load_mode
    p.load_mode = load.LLAMA_LOAD_MODE_MMAP if args.mmap == "on" else load.LLAMA_LOAD_MODE_NONE
    return p


def compiled_arguments(argv: list[str] | None = None) -> list[str]:
    """The same settings in llama-cpp-python's server's words (it keeps the prompt in its one
    model's cache across requests by itself)."""
    args = _parser().parse_args(argv)
    on = {"on": "true", "off": "false"}
    return [
        "--model", args.model, "--model_alias", args.alias, "--host", "127.0.0.1", "--port", str(args.port),
        "--n_ctx", str(args.ctx), "--n_threads", str(args.threads), "--n_threads_batch", str(args.threads),
        "--n_batch", str(args.batch), "--n_ubatch", str(args.batch), "--logits_all", "false",
        "--flash_attn", on[args.flash_attn], "--use_mmap", on[args.mmap], "--use_mlock", "false",
    ]


def cpu_has_amx(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    try:
        return "amx_tile" in cpuinfo.read_text().split()
    except OSError:
        return False


def _without_extra_buffers() -> None:
    import llama_cpp.llama_cpp as low

    defaults = low.llama_model_default_params

    def params():  # noqa: ANN202 - llama_cpp's ctypes struct
        value = defaults()
        value.use_extra_bufts = False
        return value

    low.llama_model_default_params = params


def run_compiled(argv: list[str] | None = None) -> None:
    if cpu_has_amx():
        _without_extra_buffers()
    from llama_cpp.server.__main__ import main as serve

    sys.argv = ["llama_cpp.server", *compiled_arguments(argv)]
    serve()


def main(argv: list[str] | None = None) -> None:
    if _parser().parse_args(argv).engine == "compiled":
        run_compiled(argv)
        return
    import xllamacpp

    server = xllamacpp.Server(params(argv))  # loads the model, then listens
    print(f"listening on {server.listening_address}", flush=True)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    while True:
        signal.pause()


if __name__ == "__main__":
    main()
