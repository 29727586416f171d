"""ASAP stage 3: fine-tune a tracking policy in the simulator corrected by a frozen Δa, and the whole loop."""
