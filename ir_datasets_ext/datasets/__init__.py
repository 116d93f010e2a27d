"""One module per benchmark family; importing a module registers its datasets."""
