"""agio for PyG (torch_geometric): a FeatureStore whose node features live on an agio store and
reach the GPU through agio's software cache, one launch per mini-batch, and a NeighborSampler
that samples without pyg-lib. Needs PyTorch and torch_geometric (`import agio` does not).
See docs/PYG.md."""

from .feature_store import FeatureStore
from .sampler import NeighborSampler

__all__ = ["FeatureStore", "NeighborSampler"]
