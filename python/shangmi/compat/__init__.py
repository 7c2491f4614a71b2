"""Drop-in layers for code written against other SM packages."""
