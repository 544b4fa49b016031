"""The committed digest of every generator version (see `tasks.generated.generator_digest`
and `tasks.claim_families.generator_digest`).

A unit test recomputes the current versions' digests: a generator edit that changes what
any seed produces fails it until the family's VERSION is bumped and its new digest added
here (`uv run python scripts/generator_digests.py` prints them). Old versions stay listed:
they name what earlier published numbers were measured on.
"""

from __future__ import annotations

DIGESTS: dict[str, str] = {
    # v1: one card template per family (up to commit 1b70710).
    "fix_types-v1": "2e2c0e00ae729bdba864b3aeab10a4765913952ad8be7d778b36946207445936",
    "normalize_dedupe-v1": "98f0c4af34d949a64379307e568a82e40f9cdf116792d11f5fe4ca24f2a16707",
    "full_pipeline-v1": "a7c1ae7c2ce442ef5b27bae39733372d1ee2d8390e42ea979149c163ee321819",
    "crm-v1": "afbd3868dfda75c4d272372cc3c83b80066520a46460123586e3b3a44cfca85c",
    "orders-v1": "e88f8ed2b3c08b1468b78ec8db612171e706711681014b934998f05d36e1cd95",
    "inventory-v1": "e6ccdd9577044fde6807e31852d6718b94933fbaf7ba56ac1fcbe91e78d9eeb4",
    # v2: many phrasings, per-instance error choices, rules left to the data on hard cards.
    "fix_types-v2": "3238ac198ec278a6c3108bc4a1335233ffd3b8faba4ff0357edf7a8d1d2e65a8",
    "normalize_dedupe-v2": "d29f6bf7a265da5bdc40edbc41d2c7b2510b15f837592499fbb53957f4845907",
    "full_pipeline-v2": "9854fb6abf7fd8cf939eb0151c3a9302b0c9d39fe04ce4a4ddd3365b0b53ff96",
    "crm-v2": "14b7287d2dc3f80aee5f88f0111defe63593f60f5b50fd19e7b9a5dd63d9ef77",
    "orders-v2": "1739fe54fdbb5ffd6066fb251d8d3bda1cd0a4ee00a796200bec8f7cdda0ca50",
    "inventory-v2": "d9087a8ccc57e0b7f32852dd933049b6ab0b7a97205f493018201d80a2e1ed0d",
    # The seeded claims families (tasks/claim_families.py), v1: first versioned; what they produced
    # before was not pinned.
    "error_detection-v1": "2771e87250abb6b69c44dd770e45f4e55348fcba4c7dca24e32fd9e2b7f5cd88",
    "standardisation-v1": "3f5a301e3edc67bfe9af65ba9147daf05e7ab10dbfe81124cea5e2757d2c971a",
    "audit_pipeline-v1": "a754750ab8737fa3bcadf89fb5586c31039737a3c4444be5837dc50cd905a598",
    # The corpus tables (tasks/corpus.py), v1: a seeded mix of each table's tab-err layers.
    "corpus_airports-v1": "5785615ee3fb6bbbf6ea6b594244470b9e0988ba573eb7005df30d8271d2beb9",
    "corpus_flights-v1": "1ba822d3207b703b36b7f1962eb69c58152af87723657903eebb0efa0b1c7232",
    "corpus_gapminder-v1": "ad83e35d8a177d5467f3f6ba25bce9eacefc5d4830a517ea67c8b107f9aa4599",
    "corpus_planes-v1": "c3b76f3c907336044e2f0b74362dc5c61f25a836b58b4a04d66fbfada963ae4b",
    "corpus_seattle_weather-v1": "65cfe892803e25f8dd6328e6ab81323505c1a510a0762c6ffad40825df9fbcd7",
    "corpus_weather-v1": "270b62618a34d005e9085485b0a1884776101c5270024c7c42bb3e741ffe5eca",
    # v2: the layers tab-err lacks (own_errors.py: case, column swaps, duplicates,
    # conflicting sources) and doubled spaces; added rows follow theirs, keys renumbered.
    "corpus_airports-v2": "df0f3b88bf6dda704245640400734ebec941a1413404c4a0fa6ea4252aa2087b",
    "corpus_flights-v2": "e0c827b4cf01c27074b7ac2109ec54b224724e6f670c6f98fb25bdfe6e3cc353",
    "corpus_gapminder-v2": "43b181dae9ad6a010aa1bcfd63e629963fd396310d42de14d08ea727fc8a9da4",
    "corpus_planes-v2": "82691ce033c0de4c49c5dcbf7beb647c0a819b42aa2eda60e702d62300422ac9",
    "corpus_seattle_weather-v2": "7ce8d921cac866b1a87b2cb5f062c0fefd2662faab5fd9b7c3014649b915cfdf",
    "corpus_weather-v2": "f274d70f3e03a89954f834243e21f3df504d5026b512337d6e336da1a4a37e4d",
    # v3: the same tables; the description names the score net repair (grader-3).
    "corpus_airports-v3": "5c5a4e988ca3e11a46d7687634bf136164845a415f56c9cf058ea8395bb23705",
    "corpus_flights-v3": "411d45e4331beee3a033a7e3cacdc52ee568226c179f6907cb4d2f2d6a3bc71c",
    "corpus_gapminder-v3": "c41e8ed7e6d807f56acf0b013e2bbac6004b941618eb9bab6b3c5f3df6a10821",
    "corpus_planes-v3": "71d8137110bc1fa2178b844c821a09e468a27cfb30998dc71e7feb75931d541b",
    "corpus_seattle_weather-v3": "a8598147dc20b07931a7e347bfec3965921b8addde81091a85af90efdacd0102",
    "corpus_weather-v3": "490fbfda7320138cf212781f97463423941dea3ba9846f2bd8e68ec8cb808783",
}
