"""An LLM agent trained from scratch on CPU: tokenizer, tiny Qwen3, pre-training, SFT and GRPO.

Nothing is built on import; every step is a function or ``agentenv reproduce``
lesson. See ``docs/llm-from-scratch.md``.
"""
