"""GRPO on Data Cleaning OpenEnv with TRL's `environment_factory`.

    python examples/trl_grpo.py                      # offline: tiny random model, 3 steps
    python examples/trl_grpo.py --model Qwen/Qwen2.5-0.5B-Instruct --steps 200
    python examples/trl_grpo.py --env-url http://127.0.0.1:7860   # the environment on a server

Run it with the training venv: `bash .ci/setup-training.sh`, then
`~/.cache/data-cleaning-openenv/trl/bin/python examples/trl_grpo.py`.

The prompts are instances of generated task families (`--tasks`: any task ids); the model
calls one tool per operation those tasks allow (`tool_env_class(task_operations(tasks))`,
generated from the task and operation registries); TRL runs the tool loop, the environment
applies each call, and the rollout's reward is the episode's score gain (`get_reward`).

Offline (no `--model`) nothing is downloaded: the script trains a byte-level BPE tokenizer on
this environment's own text, gives it Qwen2.5's chat template (which TRL knows how to parse
tool calls from), and builds a randomly initialised two-layer Qwen2 model. Such a model never
writes a tool call, so `--scripted-share` (offline default 0.5) replaces the first-turn tokens
of that share of each group's completions with the first call of the oracle baseline's moves
(the task's reference plan, then `finish`), and every later turn of those rollouts with the
next call. Everything downstream is TRL's and the environment's own: parsing the call,
running the tool, the tool response, the reward, the group advantages, the loss and the
optimiser step (scripted tokens are trained on like sampled ones, i.e. off-policy). With a
real model the share defaults to 0.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

if not any(arg == "--model" or arg.startswith("--model=") for arg in sys.argv[1:]):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # set before transformers is imported
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run from a checkout

import torch
from transformers import PrinterCallback, TrainerCallback
from trl import GRPOConfig, GRPOTrainer

from dataclean_env.tasks import default_registry
from dataclean_env.training.rows import as_dataset, rows
from dataclean_env.training.trl_env import task_operations, tool_env_class
from dataclean_env.training.trl_trainer import DataCleaningGRPOTrainer
from datasets import Dataset

FINISH = {"operation": "finish", "parameters": {}}
EPISODE = re.compile(r"Episode: (\S+) seed (\d+) split (\w+)\.")
# Generated families on which an agent gains within its first few calls, with room above
# the heuristic baseline (docs/DESIGN.md, Training); their operations are the tools.
DEFAULT_TASKS = ["fix_types", "normalize_dedupe", "crm"]
SYSTEM = (
    "You clean a dirty data table with the tools, one operation per call, "
    "and call finish when it is clean."
)


def main() -> None:
    args = parse_args()
    torch.manual_seed(args.seed)
    tools = task_operations(args.tasks)  # what the tasks allow, from the registry
    env_class = tool_env_class(tools, remote=bool(args.env_url), name="DataCleaningEnv")
    env_class.rows_shown = args.rows_shown or (5 if args.model else 2)
    factory = partial(env_class, args.env_url) if args.env_url else env_class
    rollouts = RolloutLog(factory)
    # The environment's own rows (reset arguments), each given its prompt.
    dataset = as_dataset(prompted(rows(args.tasks, seeds=args.seeds)))
    if args.model:
        model, tokenizer = args.model, None
        share = args.scripted_share if args.scripted_share is not None else 0.0
    else:
        tokenizer = offline_tokenizer(dataset, tools, env_class.rows_shown)
        model = offline_model(tokenizer)
        share = args.scripted_share if args.scripted_share is not None else 0.5
    with tempfile.TemporaryDirectory(prefix="trl-grpo-") as scratch:
        train(args, model, tokenizer, dataset, rollouts, share, tools, args.output_dir or scratch)


def train(args, model, tokenizer, dataset, rollouts, share: float, tools, output_dir: str) -> None:
    config = GRPOConfig(
        output_dir=output_dir,
        max_steps=args.steps,
        per_device_train_batch_size=args.generations * 2,
        num_generations=args.generations,
        max_completion_length=args.max_completion_length,
        max_tool_calling_iterations=8,
        gradient_checkpointing=False,
        # Each model turn's own sample; the tool loop as a whole stops at max_completion_length.
        generation_kwargs={"max_new_tokens": args.max_new_tokens or (256 if args.model else 64)},
        learning_rate=args.learning_rate,
        temperature=1.0,
        logging_steps=1,
        log_completions=True,  # exercises the workaround in DataCleaningGRPOTrainer
        num_completions_to_print=0,
        report_to="none",
        disable_tqdm=True,
        save_strategy="no",
        use_cpu=not torch.cuda.is_available(),
        seed=args.seed,
    )
    base = GRPOTrainer if args.stock_trainer else DataCleaningGRPOTrainer
    trainer_class = scripted_trainer(share, base) if share > 0 else base
    trainer = trainer_class(
        model=model,
        args=config,
        train_dataset=dataset,
        processing_class=tokenizer,
        environment_factory=rollouts.factory,
        callbacks=[StepPrinter(rollouts)],
    )
    trainer.remove_callback(PrinterCallback)  # our [STEP] lines instead of raw log dicts
    print(
        f"[START] model={args.model or 'tiny-random-qwen2'} "
        f"params={sum(p.numel() for p in trainer.model.parameters())} "
        f"tools={len(tools)} env={'remote ' + args.env_url if args.env_url else 'in-process'} "
        f"scripted_share={share}",
        flush=True,
    )
    started = time.monotonic()
    trainer.train()
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    done = rollouts.all
    print(
        f"[DONE] steps={trainer.state.global_step} seconds={time.monotonic() - started:.0f} "
        f"rollouts={len(done)} tool_calls={sum(r['tool_calls'] for r in done)} "
        f"refused={sum(r['refused'] for r in done)} "
        f"max_reward={max((r['reward'] for r in done), default=0.0):.4f} "
        f"nonzero_loss_steps={sum(1 for loss in losses if loss != 0.0)}",
        flush=True,
    )


class RolloutLog:
    """Wraps the environment class to record each rollout's tool calls and reward (TRL calls
    `get_reward` once per finished rollout)."""

    def __init__(self, factory):
        log = self.pending = []
        self.all = []

        class Recorded(factory.func if isinstance(factory, partial) else factory):
            def get_reward(self) -> float:
                reward = super().get_reward()
                log.append(
                    {"tool_calls": self.tool_calls, "refused": self.refused, "reward": reward}
                )
                return reward

        Recorded.__name__ = Recorded.__qualname__ = "DataCleaningEnv"
        self.factory = (
            partial(Recorded, *factory.args) if isinstance(factory, partial) else Recorded
        )

    def take(self) -> list[dict]:
        taken, self.pending[:] = list(self.pending), []
        self.all += taken
        return taken


class StepPrinter(TrainerCallback):
    """One line per optimiser step: loss, rewards, and what reached the environment."""

    def __init__(self, rollouts: RolloutLog):
        self.rollouts = rollouts

    def on_log(self, args, state, control, logs=None, **kwargs):
        if not logs or "loss" not in logs:
            return
        taken = self.rollouts.take()
        rewards = ",".join(f"{r['reward']:.4f}" for r in taken)
        print(
            f"[STEP] step={state.global_step} loss={logs['loss']:.6f} "
            f"reward_mean={logs.get('reward', 0.0):.4f} reward_std={logs.get('reward_std', 0.0):.4f} "
            f"tool_calls={sum(r['tool_calls'] for r in taken)} "
            f"refused={sum(r['refused'] for r in taken)} rewards={rewards}",
            flush=True,
        )


def prompted(table: list[dict]) -> list[dict]:
    """Each (task, seed) row with its prompt; `reset` receives the row and opens that episode."""
    return [
        {
            "prompt": [
                {"role": "system", "content": SYSTEM},
                {
                    "role": "user",
                    "content": f"Episode: {row['task_id']} seed {row['seed']} split {row['split']}.",
                },
            ],
            **row,
        }
        for row in table
    ]


def scripted_trainer(share: float, base: type[GRPOTrainer]):
    """The trainer with a generation hook: in each group, the first `share` of completions
    follow the task's reference plan, one tool call per turn (see the module docstring)."""
    registry = default_registry()

    class ScriptedGRPOTrainer(base):
        def _generate_single_turn(self, prompt_ids, images, multimodal_fields, *args, **kwargs):
            texts = [self._tokenizer.decode(ids) for ids in prompt_ids]
            first_turn = not any("<tool_response>" in text for text in texts)
            per_group = round(share * self.num_generations)
            scripted = [
                i % self.num_generations < per_group if first_turn else "<tool_response>" in text
                for i, text in enumerate(texts)
            ]
            completion_ids: list = [None] * len(prompt_ids)
            sampled = [i for i, s in enumerate(scripted) if not s]
            if sampled:  # the model generates only the completions the script leaves to it
                generated, logprobs = super()._generate_single_turn(
                    [prompt_ids[i] for i in sampled], images, multimodal_fields, *args, **kwargs
                )
                assert logprobs is None, "the scripted hook supports transformers generation only"
                for i, ids in zip(sampled, generated, strict=True):
                    completion_ids[i] = ids
            for i, text in enumerate(texts):
                if scripted[i]:
                    task_id, seed, split = EPISODE.search(text).groups()
                    plan = registry.make(task_id, int(seed), split).reference_plan
                    completion_ids[i] = self._tokenizer.encode(
                        script_text(plan, text), add_special_tokens=False
                    )
            return completion_ids, None

    return ScriptedGRPOTrainer


def script_text(plan, text: str) -> str:
    """The next turn of the oracle baseline's moves: the plan, then `finish` unless the
    episode is already over (a claim task scores only when it ends)."""
    turn = text.count("<tool_response>")
    over = "the episode is over" in text.rpartition("<tool_response>")[2]
    if turn < len(plan):
        return tool_call(plan[turn])
    if turn == len(plan) and not over:
        return tool_call(FINISH)
    return "The table is clean.<|im_end|>"


def tool_call(action: dict) -> str:
    call = {"name": action["operation"], "arguments": action["parameters"]}
    return f"<tool_call>\n{json.dumps(call)}\n</tool_call><|im_end|>"


def offline_tokenizer(dataset: Dataset, tools: list[str], rows_shown: int):
    """A byte-level BPE tokenizer trained here on this environment's own text (prompts with
    the tool schemas, observations, reference plans), with Qwen2.5's chat template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast
    from trl.chat_template_utils import qwen2_5_chat_template

    special = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    markup = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"]
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=4096,
        special_tokens=special + markup,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    bpe.train_from_iterator(corpus(dataset, tools, rows_shown), trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=special,
        padding_side="left",
    )
    tokenizer.add_tokens(markup)  # whole tokens, but kept when decoding (not special)
    tokenizer.chat_template = qwen2_5_chat_template
    return tokenizer


def corpus(dataset: Dataset, tools: list[str], rows_shown: int):
    from transformers.utils import get_json_schema

    env = tool_env_class(tools)()
    env.rows_shown = rows_shown
    registry = default_registry()
    schemas = [json.dumps(get_json_schema(getattr(env, name))) for name in tools]
    for row in dataset:
        yield "\n".join([SYSTEM, *schemas, row["prompt"][-1]["content"]])
        yield env.reset(**row)
        for action in [
            *registry.make(row["task_id"], row["seed"], row["split"]).reference_plan,
            FINISH,
        ]:
            yield tool_call(action)
            try:
                yield getattr(env, action["operation"])(**action["parameters"])
            except ValueError as error:
                yield str(error)


def offline_model(tokenizer):
    from transformers import Qwen2Config, Qwen2ForCausalLM

    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=8192,
        bos_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=True,
    )
    model = Qwen2ForCausalLM(config)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="a model name or path (default: tiny random, offline)")
    parser.add_argument("--env-url", help="a running server (default: the engine in-process)")
    parser.add_argument("--steps", type=int, default=3, help="GRPO optimiser steps (default: 3)")
    parser.add_argument(
        "--tasks",
        nargs="+",
        default=DEFAULT_TASKS,
        help="task ids whose instances make the prompts; the operations they allow are the "
        f"tools (default: {' '.join(DEFAULT_TASKS)})",
    )
    parser.add_argument(
        "--seeds",
        type=int,
        nargs="+",
        default=[0, 1],
        help="instance seeds per task, one prompt each (default: 0 1)",
    )
    parser.add_argument(
        "--generations", type=int, default=4, help="completions per prompt (default: 4)"
    )
    parser.add_argument(
        "--max-completion-length",
        type=int,
        default=768,
        help="tokens per rollout, all turns (default: 768)",
    )
    parser.add_argument(
        "--max-new-tokens", type=int, help="per model turn (default: 64 offline, 256 with --model)"
    )
    parser.add_argument("--learning-rate", type=float, default=1e-4, help="AdamW's (1e-4)")
    parser.add_argument(
        "--rows-shown",
        type=int,
        help="sample rows per observation (default: 2 offline, 5 with --model)",
    )
    parser.add_argument("--scripted-share", type=float, help="see the module docstring")
    parser.add_argument(
        "--stock-trainer",
        action="store_true",
        help="TRL's GRPOTrainer without the log_completions workaround (to see the crash)",
    )
    parser.add_argument("--output-dir", help="checkpoints and logs (default: a temporary folder)")
    parser.add_argument("--seed", type=int, default=0, help="the trainer's random seed")
    return parser.parse_args()


if __name__ == "__main__":
    main()
