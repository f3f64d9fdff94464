FR = {}
FR["7fb6b3c4"] = """# Chapitre 4 — La frontière autour du corps d'outil

**Durée :** environ 35 minutes.

**Prérequis :** les chapitres 1 à 3 (les événements, les statuts, les modèles scriptés, la
condition hôte).

Le modèle ne détient jamais le corps d'un outil. Il en détient un *nom* ; l'hôte détient un outil
gardé, et chaque invocation, qu'elle vienne de la boucle ou de votre propre code, passe par la même
garde avant que le corps puisse s'exécuter.

**Ce que vous saurez faire**

- énumérer les étapes de la garde dans leur ordre fixe, et vous servir de cet ordre pour prédire
  quelle règle nomme un arrêt ;
- distinguer ce que l'on montre au modèle de ce que l'hôte accorde ;
- appeler directement un outil gardé, hors de toute boucle, et lire ce que le périmètre d'exécution
  a enregistré ;
- prédire ce que coûte un appel quand ses arguments ne se lient pas, quand il est refusé et quand
  son corps échoue."""
FR["8fd67fba"] = """## La garde, étape par étape

1. **Lier** les arguments bruts aux types déclarés par le corps. S'ils ne se lient pas, l'appel
   n'atteint jamais la garde : rien n'est compté.
2. Sous un seul verrou, dans cet ordre :
   1. l'exécution est-elle annulée, ou son délai est-il dépassé ?
   2. **permission** : la capacité de l'outil est-elle accordée ?
   3. **budget d'outils** : `tool_calls` tentatives ont-elles déjà été admises ?
   4. **répétition** : cette signature a-t-elle déjà eu `repetitions` tentatives ?
   5. **réservation** : compter la tentative et sa signature, enregistrer `ToolCall`.
3. Exécuter le corps, hors du verrou, avec l'annulation de l'exécution.
4. Vérifier de nouveau l'annulation.

Les vérifications qui suivent l'annulation sont des règles nommées, dans cet ordre :"""
FR["e75e131a"] = """## Un outil que le modèle peut voir

Le modèle est celui, exemplaire, du chapitre 3 : il demande `read_ticket(42)`, puis
`finish_review(42)`, puis dit "Review finished.". Cette fois, l'hôte n'accorde que `review.finish`.
Les deux outils restent dans la liste montrée au modèle : le modèle demandera donc quand même
`read_ticket`.

Prédisez, pour l'agent simple et pour le harness : le statut, et le nombre d'événements `ToolCall`."""
FR["9a4e7ee7#hint"] = """De quelle capacité `read_ticket` a-t-il besoin, et est-elle accordée ? Figurer dans la liste d'outils du modèle n'est pas une autorisation. Un appel que la garde refuse est arrêté avant l'étape de réservation."""
FR["a8acf0f5"] = """Cet hôte est le scénario `forbidden` de la leçon. Son en-tête montre les deux côtés : ce qui est
accordé, et ce que le modèle peut voir."""
FR["1d222c70"] = """Visible ne veut pas dire permis. Le middleware a vu l'appel (il s'exécute avant la garde), la garde
l'a refusé à l'étape de permission, avant toute réservation, et aucun corps ne s'est exécuté :"""
FR["perm-chart-read"] = """Dans le graphique, c'est la ligne des permissions qui est mise en évidence : c'est elle qui a décidé
l'arrêt. Aucune tentative d'outil n'a été utilisée."""
FR["23dfc120"] = """## Quand deux règles arrêteraient toutes deux un appel

Le disque rayé du chapitre 1 demande `read_ticket(42)` à chaque appel. Exécutez-le avec un budget
d'outils de **1** et la valeur par défaut d'une tentative par signature : son deuxième appel est à
la fois une répétition *et* un dépassement de budget. Une seule règle peut nommer l'arrêt. Laquelle,
et combien d'événements `ToolCall` ?"""
FR["5d878515#hint"] = """Repérez l'étape du budget d'outils et celle de la répétition dans la liste numérotée de la garde : le premier appel a été admis, et c'est l'étape qui vient en premier qui tranche pour le deuxième."""
FR["order-budget"] = """Le budget d'outils est vérifié avant la répétition : le deuxième appel arrête donc l'exécution avec
`ToolBudget`, bien qu'il soit aussi une répétition. L'ordre fait partie du contrat : un même appel
reçoit toujours la même raison. La chronologie montre où chaque étape a eu lieu : la ligne
« model » demande, la ligne « middleware » voit passer les deux appels, la ligne « guard » admet le
premier et refuse le second, et la ligne « body » ne compte qu'une seule entrée."""
FR["2a0cdf0c"] = """## Appeler directement un outil gardé

Pas de modèle, pas de boucle : créez un périmètre d'exécution, laissez la tâche y fabriquer ses deux
outils, et appelez-en un vous-même. Ce périmètre n'accorde que `review.finish`. Il reçoit aussi un
délai d'une heure : l'horloge d'un périmètre utilisé directement démarre à son premier appel, et les
120 s par défaut pourraient s'écouler pendant que vous lisez."""
FR["93310ebd"] = """Ce que vous avez en main est un outil gardé, pas le corps. Le périmètre d'exécution ne distribue
jamais le corps brut, et la fixture de la tâche garde ses corps privés : appeler l'outil, c'est donc
passer par sa garde.

Des arguments qui ne se lient pas s'arrêtent avant la garde : une erreur claire, et rien n'est
compté :"""
FR["f1f239cc"] = """Des arguments qui se lient arrivent à la garde, qui refuse la capacité manquante exactement comme
dans la boucle. Un refus est un arrêt : le périmètre enregistre la raison et s'arrête."""
FR["first-stop-ask"] = """### Prédire : deux appels dont la capacité est accordée

Le périmètre d'exécution s'est arrêté : les événements ci-dessus disent pourquoi. Appelez maintenant
`finish_review(42)`, deux fois. Sa capacité, `review.finish`, **est** accordée. Prédisez :

1. combien de fois le corps de `finish_review` s'exécute ;
2. la raison d'arrêt du périmètre après les deux appels."""
FR["first-stop-predict#hint"] = """Parcourez dans l'ordre les étapes de la garde pour le deuxième appel, en partant de la première : quelle étape peut répondre avant que l'on atteigne la vérification des permissions ?"""
FR["8044bd48"] = """`invoke_each` fait plusieurs appels directs l'un après l'autre et enregistre comment chacun s'est
terminé, au lieu de lever une exception :"""
FR["397ecc9a"] = """Le premier arrêt l'emporte. Les deux appels ont été refusés avec la première raison, bien que leur
propre capacité soit accordée, et la raison d'arrêt n'a pas changé : un périmètre arrêté n'admet
plus rien, quel que soit l'appelant et quel que soit l'appel.

## Un corps qui échoue compte-t-il ?

Ce modèle scripté appelle `finish_review` trop tôt, puis lit le ticket, puis retente
`finish_review(42)` :"""
FR["early-ask"] = """Le premier corps de `finish_review` échoue (le ticket n'est pas encore lu), et le modèle voit
l'erreur. Cette tentative ratée consomme-t-elle quelque chose ? Prédisez le statut et le nombre de
`ToolCall`."""
FR["d56fdb6b#hint"] = """Dans la liste de la garde, la réservation a lieu avant l'exécution du corps : un corps qui échoue rend-il sa tentative, et combien de tentatives une signature a-t-elle ?"""
FR["failed-body-counts"] = """Un corps qui échoue compte quand même. La réservation est faite avant l'exécution du corps et tient
même si le corps échoue : le premier `finish_review(42)` a utilisé l'unique tentative de la
signature, et la nouvelle tentative a donc été refusée comme répétition ; la revue n'a jamais été
terminée. Dans la chronologie, la ligne « body » montre deux corps (le `finish_review` qui a échoué
et la lecture) ; le troisième appel s'arrête sur la ligne « guard »."""
FR["097aa9c2"] = """## Auto-vérification"""
FR["cd88c93e"] = """## Explorer

Exécutez `complete` et baissez le curseur des appels d'outil d'un cran à la fois, de 4 jusqu'à 0.
Pour chaque valeur : quel appel est refusé, son corps démarre-t-il, et que reçoit le modèle à la
place ? Refaites ensuite les mêmes étapes avec l'agent simple : la part des événements qui revient
à la garde change-t-elle ?"""
FR["questions"] = """## Questions

**1.** Pourquoi la réservation doit-elle avoir lieu *avant* le corps, sous le verrou, plutôt
qu'après un corps qui a réussi ?

<details><summary>Réponse</summary>

Si le comptage se faisait après le corps, deux appels arrivant en même temps pourraient tous deux
passer la vérification du budget avant que l'un ou l'autre ne soit compté, et les deux corps
s'exécuteraient (suradmission). Un corps qui échoue ou qui reste bloqué ne serait, lui, jamais
compté : un modèle pourrait donc retenter indéfiniment un appel qui échoue. Réserver sous le verrou
fait de « vérifier et compter » une seule étape, et la tentative est consommée quoi que fasse le
corps.

</details>

**2.** Le middleware a enregistré un événement pour l'appel refusé. Pourquoi n'est-ce pas dans le
middleware que l'autorisation doit se trouver ?

<details><summary>Réponse</summary>

Le middleware fait partie de la boucle : un appel direct (comme `read_ticket.invoke` plus haut) ne
passe jamais par lui, et une autre boucle pourrait utiliser un autre middleware. La garde appartient
à l'outil : toutes les voies d'accès la rencontrent. Le middleware observe ; la garde décide.

</details>

**3.** Avec `tool_calls=0`, l'hôte qui n'accorde que `review.finish` rencontre deux règles dès le
premier appel. Quel statut, et pourquoi ?

<details><summary>Réponse</summary>

`PermissionDenied`, avec 0 événement `ToolCall`. La permission est vérifiée avant le budget
d'outils : c'est donc elle qui nomme l'arrêt, même si le budget refuserait lui aussi. Essayez-le
dans un panneau : `explorer("forbidden")`.

</details>

**4.** Dans `too_early`, que changerait `repetitions=2` ? Prédisez, puis essayez.

<details><summary>Réponse</summary>

La nouvelle tentative de `finish_review(42)` est sa deuxième, désormais autorisée : elle s'exécute
après la lecture et réussit. Le modèle dit alors "Review finished." et l'exécution se termine en
`Completed` avec 3 événements `ToolCall` (3 des 4 tentatives autorisées).

</details>"""
FR["key-points"] = """## Points clés

- La liaison typée vient en premier ; un appel dont les arguments ne se lient pas n'est jamais
  compté.
- Ensuite, sous un seul verrou : annulation, permission, budget d'outils, répétition, réservation.
  La première règle qui refuse nomme l'arrêt.
- Visible ne veut pas dire permis : le modèle voyait `read_ticket`, et la garde a tout de même
  refusé l'appel, avant qu'aucun corps ne s'exécute.
- Un appel direct passe par la même garde que la boucle : le périmètre d'exécution ne distribue
  jamais le corps brut, et la fixture garde ses corps privés.
- Le premier arrêt l'emporte : après un arrêt, chaque appel suivant est refusé avec la première
  raison.
- Une tentative est réservée avant l'exécution de son corps : un corps qui échoue consomme donc
  quand même sa tentative.

**Pour aller plus loin**

- Accordez tout dans un périmètre utilisé directement (`{"ticket.read", "review.finish"}`) et
  appelez deux fois `read_ticket.invoke({"input": 42})`.
- Le chapitre 8 appelle un même outil gardé depuis de nombreux threads à la fois.
- Ensuite : le chapitre 5 décortique la signature que compare la règle de répétition."""
FR["instructor"] = """## Notes pour l'enseignant

<details><summary>Idées reçues fréquentes et pistes de discussion</summary>

**Idées reçues fréquentes**

- « Si le modèle voit un outil, il a le droit de s'en servir. » La visibilité est une affaire de
  prompt : elle dit au modèle ce qu'il peut demander ; la permission est vérifiée à l'exécution, à chaque appel.
- « Deux raisons s'appliquent, donc l'exécution rapporte les deux » (ou « la dernière »). L'ordre de
  la garde est fixe et la première règle qui refuse nomme l'arrêt ; après un arrêt, la raison
  d'arrêt ne change plus jamais.
- « Un corps qui échoue ne compte pas. » La réservation a lieu avant le corps ; un appel qui échoue
  consomme quand même sa tentative et sa signature.
- « Appeler un outil depuis mon propre code contourne les limites. » La garde fait partie de l'outil
  fabriqué par le périmètre d'exécution ; les appels directs sont comptés et refusés comme ceux de
  la boucle.

**Pistes de discussion**

- Lesquels de vos outils voudriez-vous visibles mais non accordés (par exemple pour que le modèle
  puisse dire « j'aurais besoin d'un accès à X ») ? Lesquels ne devraient pas être visibles du tout ?
- Une tentative ratée devrait-elle compter ? Défendez les deux positions ; de quoi aurait besoin une
  politique de nouvelles tentatives placée au-dessus de la garde ?

</details>"""
