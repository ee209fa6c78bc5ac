"""Tokens shared by the text datasets."""

EOS_TOKEN = "<eos>"
