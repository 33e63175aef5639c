"""agio.torch: PyTorch modules whose tables live on agio stores and are read through agio's
cache in GPU memory (docs/PYTORCH.md). Importing it imports PyTorch; `import agio` does not."""

from ._collection import EmbeddingBagCollection, EmbeddingBagConfig
from ._embedding_bag import EmbeddingBag

__all__ = ["EmbeddingBag", "EmbeddingBagCollection", "EmbeddingBagConfig"]
