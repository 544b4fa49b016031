"""Print the digest of every seeded family's current generator version (cleaning, claims and
the corpus tables).

    uv run python scripts/generator_digests.py

After a deliberate change to a generator, bump its VERSION (the module's, or the family's
entry in `tasks/claim_families.py:VERSIONS`, `corpus/instances.py:VERSION`) and add the printed
line for the new version to `dataclean_env/generation/digests.py` (keep the old ones: they
name what older published numbers were measured on).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dataclean_env.tasks import claim_families, corpus
from dataclean_env.tasks.generated import FAMILIES, GENERATOR_VERSIONS, generator_digest

if __name__ == "__main__":
    for family in FAMILIES:
        print(f'    "{GENERATOR_VERSIONS[family]}": "{generator_digest(family)}",')
    for family in claim_families.GENERATED:
        print(
            f'    "{claim_families.GENERATOR_VERSIONS[family]}": "{claim_families.generator_digest(family)}",'
        )
    for task_id in corpus.TASK_IDS:
        print(f'    "{corpus.GENERATOR_VERSIONS[task_id]}": "{corpus.generator_digest(task_id)}",')
