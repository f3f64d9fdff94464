"""Transports: how a loop talks to a model, scripted or live (README.md, *The scenarios*; docs/live.md).

Read in this order:

1. :mod:`~labkit.transports.chat`: chat messages, the one-method
   :class:`~labkit.Transport` protocol and the counting client that charges
   the model-call budget (docs/guarantees.md, *Limits are exact*).
2. :mod:`~labkit.transports.scripted`: a misbehaving model written as a list of steps.
3. :mod:`~labkit.transports.live`: a real OpenAI-compatible endpoint from one
   explicit profile. Loaded only when used (``import labkit`` does not import it).
"""
