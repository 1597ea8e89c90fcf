# SPDX-License-Identifier: Apache-2.0
"""What the training scripts share (scripts/train_digits.py, scripts/train_small_models.py):
deterministic PyTorch, and the training loop with random shifts of the images.

Run with /usr/bin/python3 (Debian's python3-torch); every function takes the script's own
seed and hyperparameters, so each script's results stay its own and byte-identical between
runs."""
import numpy as np
import torch
import torch.nn.functional as F


def make_deterministic(seed):
    torch.manual_seed(seed)
    np.random.seed(seed)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)


def shifted(x_padded, shifts, pad):
    """Each image moved by (dy, dx) in -pad..pad (shifts holds dy + pad, dx + pad); zeros
    fill in."""
    h, w = x_padded.shape[2] - 2 * pad, x_padded.shape[3] - 2 * pad
    out = torch.empty(x_padded.shape[0], x_padded.shape[1], h, w, dtype=x_padded.dtype)
    for dy in range(2 * pad + 1):
        for dx in range(2 * pad + 1):
            sel = (shifts[:, 0] == dy) & (shifts[:, 1] == dx)
            out[sel] = x_padded[sel, :, dy:dy + h, dx:dx + w]
    return out


def train(model, x_train, y_train, *, seed, epochs, batch, learning_rate, weight_decay,
          shift_step):
    """Adam + cosine schedule; each epoch sees every image shifted by -1, 0 or +1 steps of
    `shift_step` pixels in each direction."""
    generator = torch.Generator().manual_seed(seed)
    optimiser = torch.optim.Adam(model.parameters(), lr=learning_rate, weight_decay=weight_decay)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimiser, T_max=epochs)
    n = x_train.shape[0]
    pad = shift_step
    x_padded = F.pad(x_train, (pad, pad, pad, pad))
    for _ in range(epochs):
        model.train()
        order = torch.randperm(n, generator=generator)
        steps = torch.randint(0, 3, (n, 2), generator=generator)
        x_epoch = shifted(x_padded, shift_step * steps, pad)
        for start in range(0, n, batch):
            idx = order[start:start + batch]
            optimiser.zero_grad()
            loss = F.cross_entropy(model(x_epoch[idx]), y_train[idx])
            loss.backward()
            optimiser.step()
        schedule.step()
    model.eval()
